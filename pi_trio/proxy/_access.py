"""Who may use the proxy and which models it serves: bearer tokens and the model policy."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from ..ai import Model, get_model

__all__ = [
    "TOKENS_ENV",
    "ModelPolicy",
    "catalog_models_only",
    "load_tokens",
    "serve_model",
    "token_digest",
]

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


def catalog_models_only(model: Model) -> Model | str:
    """The default model policy: the client's model only *names* a catalog model, by
    ``provider`` and ``id``, and the request is built from the server's catalog entry for
    it. Nothing else of the client's copy is used: not its ``headers``, ``compat``,
    ``sampling_params``, limits or costs. Its ``api`` and ``base_url`` must be the
    catalog's (another API reads its address and headers elsewhere, and a client that
    asks for another address should hear that it does not get it). Returns the model to
    serve, or the reason for a refusal (403)."""
    known = get_model(model.provider, model.id)
    if known is None:
        return (
            f"Model {model.provider}/{model.id} is not in this proxy's catalog; "
            "only catalog models are served"
        )
    if model.api != known.api:
        # Azure reads its base URL from the server's environment: an OpenAI model
        # relabelled as Azure would carry one vendor's key to another
        return (
            f"Model {model.provider}/{model.id} must use its catalog api "
            f"{known.api!r}, got {model.api!r}"
        )
    if model.base_url != known.base_url:
        return (
            f"Model {model.provider}/{model.id} must use its catalog baseUrl "
            f"{known.base_url!r}, got {model.base_url!r}"
        )
    return known


ModelPolicy: TypeAlias = Callable[[Model], "Model | str"]
"""``policy(model)``: the model to serve for the model a client named (the server's own
entry: its address, headers and quirks are what the request is built from), or the
reason for refusing it. ``catalog_models_only`` is the default; ``lambda model: model``
serves whatever a client sends, every field of it."""


def serve_model(policy: ModelPolicy, requested: Model) -> Model | str:
    """``policy(requested)``, checked: a policy that returns anything but a ``Model`` or
    a ``str`` is a bug in the server's code, named here."""
    served = policy(requested)
    if not isinstance(served, (Model, str)):
        raise TypeError(
            f"the proxy's model_policy returned {served!r}: return the Model to serve "
            "(the server's own entry, or the client's model to trust every field of it) "
            "or a str saying why the model is refused"
        )
    return served


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
