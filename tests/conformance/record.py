"""Re-record what pi 1.6 does on every conformance case (one command):

    .venv/bin/python tests/conformance/record.py     # cases/ -> pi16/, pi16_proxy.json

installs the original (``@earendil-works/pi-ai`` and ``pi-agent-core`` 1.6.0) with npm into
a scratch folder (``.cache/conformance-pi16``, or ``--pi16 DIR`` for one already installed),
runs ``record_pi16.mjs`` with node over ``cases/`` (writing ``pi16/<api>.json``), then runs
pi_trio over every case and lets the 1.6 proxy client read what pi_trio's proxy server
writes (``record_proxy_pi16.mjs``, writing ``pi16_proxy.json``). Needs node and npm;
``make test`` needs neither (it compares against the committed recordings).
After changing the cases (``python3 -m tests.conformance.generate_cases``), run this,
then the tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import trio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGES = ("@earendil-works/pi-ai@1.6.0", "@earendil-works/pi-agent-core@1.6.0")
PROXY_FILE = "pi16_proxy.json"
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pi16", default=str(ROOT / ".cache" / "conformance-pi16"))
    parser.add_argument("--out", default=str(HERE / "pi16"))
    args = parser.parse_args()
    prefix = Path(args.pi16).resolve()
    if not (
        prefix / "node_modules" / "@earendil-works" / "pi-agent-core" / "package.json"
    ).exists():
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
                *PACKAGES,
            ],
            check=True,
        )
    subprocess.run(
        ["node", str(HERE / "record_pi16.mjs"), str(prefix), str(HERE / "cases"), args.out],
        check=True,
    )
    # the 1.6 proxy client on what pi_trio's proxy server writes for every case
    proxy_file = Path(args.out).parent / PROXY_FILE
    trio.run(write_proxy_bodies, proxy_file)
    subprocess.run(
        ["node", str(HERE / "record_proxy_pi16.mjs"), str(prefix), str(proxy_file)], check=True
    )
    # the model and context come from the cases again at test time
    data = json.loads(proxy_file.read_text())
    for entry in data["cases"].values():
        del entry["model"], entry["context"]
    proxy_file.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


async def write_proxy_bodies(path: Path) -> None:
    """pi_trio on every case; what its proxy server writes, with the case's model and
    context (as the 1.6 client sends them), to ``path``."""
    from tests.conformance.test_conformance import case_ids, proxy_request, run_case

    cases = {}
    for case_id in case_ids():
        ours = await run_case(case_id)
        cases[case_id] = {**proxy_request(case_id), "body": ours["proxyBody"]}
    text = json.dumps({"cases": cases}, indent=1, ensure_ascii=False) + "\n"
    await trio.Path(path).write_text(text)


if __name__ == "__main__":
    main()
