"""tests/fixtures/pi1x is what pi-ai 1.6.0 does (tests/record_pi1x_pi16.mjs): recording it
again gives the committed files. Runs with node and the original installed (marker
``node``; ``PI16_DIR`` names the folder, as for tests/test_pi16_fixtures.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PI1X = HERE / "fixtures" / "pi1x"
RECORDER = HERE / "record_pi1x_pi16.mjs"


@pytest.mark.node
def test_recording_again_gives_the_committed_fixtures(tmp_path: Path) -> None:
    directory = os.environ.get("PI16_DIR")
    if shutil.which("node") is None or not directory:
        pytest.skip("set PI16_DIR to a folder with @earendil-works/pi-ai@1.6.0 installed")
    shutil.copy(PI1X / "pi_trio_deferred.json", tmp_path)  # the recorder's input
    done = subprocess.run(
        ["node", str(RECORDER), directory, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["version"] == "1.6.0"
    for path in sorted(PI1X.iterdir()):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
