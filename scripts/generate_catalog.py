"""Generate pi_trio's built-in model catalog from the original's data.

The catalog is the data of the npm package ``@earendil-works/pi-ai`` (MIT), which the
original generates from models.dev: ``dist/providers/data/<provider>.json``, one file per
provider. This script reads those files from an installed copy of the package and writes
``pi_trio/ai/_catalog/_catalog.bin`` (format described in ``pi_trio/ai/_catalog/_data.py``).
Every entry is kept as it is, every field of it: compat flags, thinking-level maps (with their
``null`` values), price tiers, ``inputLimits``, ``promptCache``, ``headers``, ``type``; chat,
image and classifier models alike.

Install the package and regenerate (``make catalog`` does both)::

    npm install --no-save --prefix .cache/pi-ai @earendil-works/pi-ai@1.6.0
    python scripts/generate_catalog.py .cache/pi-ai/node_modules/@earendil-works/pi-ai

``--check`` writes nothing and exits with 1 when the committed file differs from what the
package gives (the test suite runs the same comparison when the package is present).

Before writing, every chat entry is decoded as ``pi_trio.ai.Model`` and must come back
with all its fields, so a newer package with fields ``Model`` does not declare stops here
with their names instead of losing them quietly. ``NOT_MODEL_FIELDS`` lists the fields the
original's own ``Model`` type does not declare either (kept in the file, not in ``Model``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pi_trio.ai import Model, from_json, to_json  # noqa: E402
from pi_trio.ai._catalog._data import KINDS, CatalogFormatError, pack, unpack  # noqa: E402
from pi_trio.ai.json import extra_fields  # noqa: E402

PACKAGE_NAME = "@earendil-works/pi-ai"
OUTPUT = REPO / "pi_trio" / "ai" / "_catalog" / "_catalog.bin"
DATA_DIR = Path("dist", "providers", "data")
MANIFEST = ".manifest.json"
# Fields of chat entries that the original's ``Model`` type does not declare: the Radius
# gateway's own bookkeeping, which nothing in the original reads.
NOT_MODEL_FIELDS = frozenset({"lab", "enabled", "providers", "free"})

Entry = dict[str, Any]


class CatalogError(Exception):
    """The package's data is not what this script understands; the message says where."""


def read_package(package_dir: Path) -> tuple[str, str, dict[str, dict[str, dict[str, Entry]]]]:
    """``(source, generated_at, provider -> kind -> id -> entry)`` from an installed package."""
    manifest_path = package_dir / "package.json"
    if not manifest_path.is_file():
        raise CatalogError(
            f"{package_dir} has no package.json; pass the directory of the installed "
            f"{PACKAGE_NAME} package (…/node_modules/{PACKAGE_NAME})"
        )
    package = json.loads(manifest_path.read_text(encoding="utf-8"))
    if package.get("name") != PACKAGE_NAME:
        raise CatalogError(f"{package_dir} holds {package.get('name')!r}, not {PACKAGE_NAME}")
    data_dir = package_dir / DATA_DIR
    # Provider order is the original's: by id (not by file name: "google" < "google-vertex").
    files = sorted((p for p in data_dir.glob("*.json") if p.name != MANIFEST), key=lambda p: p.stem)
    if not files:
        raise CatalogError(f"{data_dir} has no provider files; is the package complete?")
    generated_at = ""
    if (data_dir / MANIFEST).is_file():
        generated_at = json.loads((data_dir / MANIFEST).read_text(encoding="utf-8")).get(
            "generatedAt", ""
        )
    providers = {path.stem: _read_provider(path) for path in files}
    return f"{PACKAGE_NAME}@{package['version']}", generated_at, providers


def _read_provider(path: Path) -> dict[str, dict[str, Entry]]:
    provider = path.stem
    groups = json.loads(path.read_text(encoding="utf-8"))
    kinds: dict[str, dict[str, Entry]] = {}
    for api, group in groups.items():
        for key, entry in group.items():
            where = f"{path.name}: {api} / {key}"
            kind = entry.get("type")
            if kind not in KINDS:
                raise CatalogError(f"{where}: type {kind!r} is none of {', '.join(KINDS)}")
            if entry.get("provider") != provider or entry.get("api") != api:
                raise CatalogError(
                    f"{where}: provider {entry.get('provider')!r} / api {entry.get('api')!r} "
                    f"do not match the file ({provider!r}) and group ({api!r})"
                )
            model_id = entry.get("id")
            if not isinstance(model_id, str) or model_id in kinds.get(kind, {}):
                raise CatalogError(f"{where}: id {model_id!r} is missing or not unique")
            if kind == "chat":
                check_chat_entry(entry, where)
            kinds.setdefault(kind, {})[model_id] = entry
    return kinds


def check_chat_entry(entry: Entry, where: str) -> None:
    """``entry`` decodes as ``Model`` and re-encodes to every one of its fields."""
    raw = msgspec.json.encode(entry)
    try:
        model = from_json(raw, Model)
    except msgspec.ValidationError as exc:
        raise CatalogError(f"{where}: not a valid pi_trio.ai.Model: {exc}") from exc
    again = msgspec.json.decode(to_json(model))
    lost = sorted(set(extra_fields(model)) - NOT_MODEL_FIELDS)
    if lost:
        raise CatalogError(
            f"{where}: pi_trio.ai.Model has no field for {', '.join(lost)}; add it to Model "
            "(or to NOT_MODEL_FIELDS here if the original's Model type lacks it too)"
        )
    changed = sorted(k for k in again if again[k] != entry[k])
    if changed:
        raise CatalogError(f"{where}: Model changes the value of {', '.join(changed)}")


def build(package_dir: Path) -> bytes:
    """The catalog file for the package in ``package_dir``."""
    source, generated_at, providers = read_package(package_dir)
    return pack(source, generated_at, providers)


def same_contents(a: bytes, b: bytes) -> bool:
    """Whether two catalog files hold the same data (compressed bytes may differ between
    zlib builds; what they inflate to may not)."""
    try:
        return unpack(a) == unpack(b)
    except CatalogFormatError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package_dir", type=Path, help=f"the installed {PACKAGE_NAME} package")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="default: %(default)s")
    parser.add_argument(
        "--check", action="store_true", help="compare with --output instead of writing it"
    )
    args = parser.parse_args(argv)
    try:
        data = build(args.package_dir)
    except (CatalogError, OSError, json.JSONDecodeError) as exc:
        print(f"generate_catalog: {exc}", file=sys.stderr)
        return 2
    header, blocks = unpack(data)
    chat = sum(len(block.get("chat", {})) for block in blocks.values())
    total = sum(len(kind) for block in blocks.values() for kind in block.values())
    summary = (
        f"{header.source}: {total} models ({chat} chat) across {len(blocks)} providers, "
        f"{len(data):,} bytes"
    )
    if args.check:
        current = args.output.read_bytes() if args.output.is_file() else b""
        if current and same_contents(current, data):
            print(f"{args.output} is up to date ({summary})")
            return 0
        print(f"{args.output} differs from {summary}; run without --check", file=sys.stderr)
        return 1
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
