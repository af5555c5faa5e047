"""Generate the conformance cases: vendor-shaped streamed answers for each of the ten APIs.

    python3 -m tests.conformance.generate_cases         # from the repository's root;
                                                        # writes tests/conformance/cases/

Every event is built through the vendor's own SDK types (anthropic, openai, google-genai,
mistralai; Bedrock's payloads are checked against botocore's service model and every
binary frame is read back by botocore's event-stream parser), so the bodies have the
shapes the vendors' servers send. The SDKs are installed by this script alone, into a
scratch virtual environment of its own (``.cache/conformance-venv``, or ``--venv DIR``);
``make test`` needs none of them: it reads the committed case files.

A case is one call: the model (the original's JSON, ``basePath`` appended to the loopback
server's address), the context and the options as pi 1.6's ``streamSimple`` takes them,
and the replies the loopback server gives, one per request: a status, headers, the body
(text, or ``bodyBase64`` for binary), ``chunk`` (send the body in pieces of that many
bytes) and ``reset`` (reset the connection after the body instead of ending it).
A ``replayFrom`` list names cases whose final messages, as pi 1.6 produced them, become
the context's assistant turns (the recorder resolves it and records the context it used).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from .case_kit import base_cases
from .dialect_anthropic import AnthropicDialect
from .dialect_bedrock import BedrockDialect
from .dialect_completions import CompletionsDialect
from .dialect_google import GoogleDialect, VertexDialect
from .dialect_mistral import MistralDialect
from .dialect_pi_messages import PiMessagesDialect
from .dialect_responses import AzureDialect, CodexDialect, ResponsesDialect

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The vendor SDKs, pinned so that generating twice gives the same bodies.
VENDOR_SDKS = (
    "anthropic==2.17.0",
    "openai==3.63.0",
    "google-genai==3.6.1",
    "mistralai==3.7.0",
    "botocore==1.44.18",
)
_MARKER = "PI_TRIO_CONFORMANCE_VENV"


def _ensure_vendor_venv(venv: Path) -> None:
    """Re-run this script inside a scratch venv that has the vendor SDKs."""
    if os.environ.get(_MARKER) == str(venv):
        return
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    stamp = venv / ".vendor-sdks"
    if not stamp.exists() or stamp.read_text() != "\n".join(VENDOR_SDKS):
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *VENDOR_SDKS], check=True)
        stamp.write_text("\n".join(VENDOR_SDKS))
    env = dict(os.environ, **{_MARKER: str(venv)})
    os.chdir(ROOT)
    argv = [str(python), "-m", "tests.conformance.generate_cases", *sys.argv[1:]]
    os.execve(str(python), argv, env)


DIALECTS = {
    "anthropic-messages": AnthropicDialect,
    "openai-completions": CompletionsDialect,
    "openai-responses": ResponsesDialect,
    "azure-openai-responses": AzureDialect,
    "openai-codex-responses": CodexDialect,
    "google-generative-ai": GoogleDialect,
    "google-vertex": VertexDialect,
    "mistral-conversations": MistralDialect,
    "bedrock-converse-stream": BedrockDialect,
    "pi-messages": PiMessagesDialect,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=str(ROOT / ".cache" / "conformance-venv"))
    parser.add_argument("--out", default=str(HERE / "cases"))
    args = parser.parse_args()
    _ensure_vendor_venv(Path(args.venv).resolve())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for api, dialect in DIALECTS.items():
        cases = base_cases(api, dialect())
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names)), names
        (out / f"{api}.json").write_text(
            json.dumps({"api": api, "cases": cases}, indent=1, ensure_ascii=False) + "\n"
        )
        total += len(cases)
        print(f"{api}: {len(cases)} cases")
    print(f"{total} cases")


if __name__ == "__main__":
    main()
