"""Who may use the proxy and which models it serves: bearer tokens and the model policy."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from ..ai import Model, get_model

__all__ = ["TOKENS_ENV", "ModelPolicy", "catalog_models_only", "load_tokens", "token_digest"]

TOKENS_ENV = "PI_TRIO_PROXY_TOKENS"


def load_tokens(
    *, tokens_file: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
) -> frozenset[str]:
    """The accepted bearer tokens: the comma-separated ``PI_TRIO_PROXY_TOKENS`` variable
    plus, if given, ``tokens_file`` (one token per line; blank lines and ``#`` comments
    are skipped)."""
    environ = os.environ if env is None else env
    tokens = {t.strip() for t in environ.get(TOKENS_ENV, "").split(",")}
    if tokens_file is not None:
        for line in Path(tokens_file).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                tokens.add(line)
    tokens.discard("")
    return frozenset(tokens)


def catalog_models_only(model: Model) -> str | None:
    """The default model policy: the model must be in the catalog and be called through
    its catalog ``api`` at its catalog ``base_url`` — the server sends its own API key to
    that URL, so a client must not be able to point it elsewhere. Returns the reason for a
    refusal, or ``None``."""
    known = get_model(model.provider, model.id)
    if known is None:
        return (
            f"Model {model.provider}/{model.id} is not in this proxy's catalog; "
            "only catalog models are served"
        )
    if model.api != known.api:
        # another API reads its address and headers elsewhere (Azure's base URL from the
        # server's environment): the key of one vendor would go to another
        return (
            f"Model {model.provider}/{model.id} must use its catalog api "
            f"{known.api!r}, got {model.api!r}"
        )
    if model.base_url != known.base_url:
        return (
            f"Model {model.provider}/{model.id} must use its catalog baseUrl "
            f"{known.base_url!r}, got {model.base_url!r}"
        )
    return None


ModelPolicy: TypeAlias = Callable[[Model], "str | None"]


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
