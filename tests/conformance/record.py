"""Re-record what pi 1.6 does on every conformance case (one command):

    python tests/conformance/record.py            # cases/ -> pi16/

installs the original (``@earendil-works/pi-ai@1.6.0``) with npm into a scratch folder
(``.cache/conformance-pi16``, or ``--pi16 DIR`` for one already installed) and runs
``record_pi16.mjs`` with node over ``cases/``, writing ``pi16/<api>.json``. Needs node and
npm; ``make test`` needs neither (it compares against the committed recordings).
After changing the cases (``generate_cases.py``), run this, then the tests.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGE = "@earendil-works/pi-ai@1.6.0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pi16", default=str(ROOT / ".cache" / "conformance-pi16"))
    parser.add_argument("--out", default=str(HERE / "pi16"))
    args = parser.parse_args()
    prefix = Path(args.pi16).resolve()
    if not (prefix / "node_modules" / "@earendil-works" / "pi-ai" / "package.json").exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                PACKAGE,
            ],
            check=True,
        )
    subprocess.run(
        ["node", str(HERE / "record_pi16.mjs"), str(prefix), str(HERE / "cases"), args.out],
        check=True,
    )


if __name__ == "__main__":
    main()
