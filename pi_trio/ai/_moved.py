"""Names that left a top level (``pi_trio.ai``, ``pi_trio.agent``) for a namespace of their
own: the error that says where each one went.

A package's ``__getattr__`` runs only when the normal look-up fails, so the names still at
the top level cost nothing. ``from pi_trio.ai import repair_json`` reaches it through the
import system's ``hasattr`` probe (``_handle_fromlist``), and Python would turn an
``AttributeError`` there into a bare "cannot import name"; so the error is an
``ImportError`` with the same text in that one place, an ``AttributeError`` everywhere
else (``hasattr(pi_trio.ai, "repair_json")`` stays false).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence

__all__ = ["moved_name_error"]

_FROM_IMPORT_PROBE = "_handle_fromlist"  # importlib's helper for ``from package import x``


def moved_name_error(package: str, name: str, homes: Sequence[str]) -> Exception:
    """The exception for ``package.name`` not found: where it went if one of ``homes``
    (public modules, imported on this miss) exports it, else Python's usual one.
    Called from the package's ``__getattr__``."""
    if not name.startswith("__"):
        for home in homes:
            if name in importlib.import_module(home).__all__:
                text = f"{package}.{name} moved to {home}: use 'from {home} import {name}'"
                if _from_import():
                    return ImportError(text, name=package)
                return AttributeError(text, name=name)
    return AttributeError(f"module {package!r} has no attribute {name!r}", name=name)


def _from_import() -> bool:
    """Whether the package's ``__getattr__`` was called by importlib's probe for ``from
    package import name`` (three frames up: this, ``moved_name_error``, ``__getattr__``)."""
    frame = inspect.currentframe()
    for _ in range(3):
        frame = frame.f_back if frame is not None else None
    return frame is not None and frame.f_code.co_name == _FROM_IMPORT_PROBE
