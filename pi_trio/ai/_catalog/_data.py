"""The built-in model catalog: the data of ``@earendil-works/pi-ai``, shipped as one file.

``_catalog.bin`` next to this module is written by ``scripts/generate_catalog.py`` from the
npm package's ``dist/providers/data/*.json`` (MIT) and is never edited by hand. Layout
(format 1)::

    b"pi-trio-catalog 1\\n"
    one line of JSON: {"source": ..., "generatedAt": ..., "providers": [[id, start, end], ...]}
    the providers' blocks, back to back

A block is one zlib stream holding the JSON object ``{"chat": {id: entry, ...},
"image": {...}, "classifier": {...}}`` (empty kinds left out); ``start``/``end`` are byte
offsets after the header line. Every entry is the upstream JSON object unchanged:
camelCase keys, every field, in the original order.

Compressing one provider at a time keeps the file small (about 70 kB for 1.1 MB of JSON)
and makes a look-up inflate only its own provider. Nothing happens at import: the file is
read on the first look-up and a provider's block on the first look-up of that provider;
the entries stay raw JSON until someone asks for them.
"""

from __future__ import annotations

import importlib.resources
import threading
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias

import msgspec

__all__ = [
    "CATALOG_FILE",
    "KINDS",
    "CatalogFormatError",
    "Header",
    "chat_entries",
    "entries",
    "pack",
    "provider_ids",
    "source",
    "unpack",
]

CATALOG_FILE: Final = "_catalog.bin"
MAGIC: Final = b"pi-trio-catalog 1\n"
# What a catalog entry is for, as in the original's ``type`` field.
KINDS: Final = ("chat", "image", "classifier")

# kind -> model id -> the entry's JSON
Block: TypeAlias = dict[str, dict[str, msgspec.Raw]]


class CatalogFormatError(ValueError):
    """The data file is not a catalog this version can read."""


class Header(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """Where the data came from, and where each provider's block lies."""

    source: str
    generated_at: str
    providers: list[tuple[str, int, int]]


_HEADER_DECODER: Final = msgspec.json.Decoder(Header)
_BLOCK_DECODER: Final = msgspec.json.Decoder(Block)


# --------------------------------------------------------------------------- format


def pack(
    source: str, generated_at: str, providers: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> bytes:
    """The file holding ``providers`` (provider -> kind -> id -> entry), in the given order."""
    blocks: list[bytes] = []
    spans: list[tuple[str, int, int]] = []
    offset = 0
    for provider, kinds in providers.items():
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise CatalogFormatError(
                f"provider {provider!r} has entries of kind {sorted(unknown)!r}; "
                f"a catalog holds only {', '.join(KINDS)}"
            )
        payload = {kind: kinds[kind] for kind in KINDS if kinds.get(kind)}
        block = zlib.compress(msgspec.json.encode(payload), 9)
        blocks.append(block)
        spans.append((provider, offset, offset + len(block)))
        offset += len(block)
    header = msgspec.json.encode(Header(source=source, generated_at=generated_at, providers=spans))
    return b"".join([MAGIC, header, b"\n", *blocks])


def unpack(data: bytes) -> tuple[Header, dict[str, Block]]:
    """Every provider's block of a catalog file, inflated (for checks and tools)."""
    header, body = _split(data)
    return header, {name: _inflate(body, name, start, end) for name, start, end in header.providers}


def _split(data: bytes) -> tuple[Header, memoryview]:
    if not data.startswith(MAGIC):
        raise CatalogFormatError(
            f"not a pi-trio catalog (it starts with {data[: len(MAGIC)]!r}); "
            "regenerate it with scripts/generate_catalog.py"
        )
    end = data.index(b"\n", len(MAGIC))
    try:
        header = _HEADER_DECODER.decode(data[len(MAGIC) : end])
    except msgspec.DecodeError as exc:
        raise CatalogFormatError(f"the catalog's header is unreadable: {exc}") from exc
    return header, memoryview(data)[end + 1 :]


def _inflate(body: memoryview, provider: str, start: int, end: int) -> Block:
    try:
        return _BLOCK_DECODER.decode(zlib.decompress(body[start:end]))
    except (zlib.error, msgspec.DecodeError) as exc:
        raise CatalogFormatError(f"the catalog's block of {provider!r} is damaged: {exc}") from exc


# --------------------------------------------------------------------------- the shipped file


class _Catalog:
    """The shipped file, read once; blocks inflated on first use and kept."""

    def __init__(self, data: bytes) -> None:
        self.header, self._body = _split(data)
        self._spans = {name: (start, end) for name, start, end in self.header.providers}
        self._blocks: dict[str, Block] = {}

    def provider_ids(self) -> list[str]:
        return list(self._spans)

    def block(self, provider: str) -> Block:
        block = self._blocks.get(provider)
        if block is None:
            span = self._spans.get(provider)
            if span is None:
                return {}
            block = self._blocks[provider] = _inflate(self._body, provider, *span)
        return block


_PACKAGE: Final = __name__.rpartition(".")[0]
_lock = threading.Lock()
_shipped: _Catalog | None = None


def _catalog() -> _Catalog:
    global _shipped
    if _shipped is None:
        with _lock:
            if _shipped is None:
                _shipped = _Catalog(_read_shipped())
    return _shipped


def _read_shipped() -> bytes:
    """The shipped file: read beside this module (``importlib.resources`` would first
    import its readers, ten times the cost of the read), through ``importlib.resources``
    where the package is not on a file system (a zip import)."""
    try:
        return Path(__file__).with_name(CATALOG_FILE).read_bytes()
    except OSError:
        return importlib.resources.files(_PACKAGE).joinpath(CATALOG_FILE).read_bytes()


def provider_ids() -> list[str]:
    """The catalog's providers, in catalog order (including those with no chat model)."""
    return _catalog().provider_ids()


def entries(provider: str, kind: str) -> dict[str, msgspec.Raw]:
    """``provider``'s entries of ``kind`` as raw JSON by model id; empty when it has none.

    The dict is the catalog's own: callers must not change it."""
    return _catalog().block(provider).get(kind, {})


def chat_entries(provider: str) -> dict[str, msgspec.Raw]:
    """``provider``'s chat models as raw JSON by model id, in catalog order."""
    return entries(provider, "chat")


def source() -> tuple[str, str]:
    """Where the shipped data came from (``"@earendil-works/pi-ai@1.6.0"``) and when the
    original generated it (ISO 8601)."""
    header = _catalog().header
    return header.source, header.generated_at
