"""``pi-trio models``: the model catalog, filtered, grouped by provider, with key status.

The catalog has some 1 700 chat models, so the listing narrows first (search words,
``--provider``, ``--reasoning``, ``--images``), says how many rows it kept, and prints one
block per provider headed by the provider's model count and whether its API key is set.
Context and output sizes are all in thousands of tokens, prices in dollars per million
tokens. Models whose api this installation cannot call yet are marked. The offline
``faux/faux-1`` model is listed too (``pi-trio run --model faux/faux-1`` needs no key).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import msgspec

from ..ai import Model, get_models, get_providers
from ..ai.models import get_supported_thinking_levels
from ..ai.providers import default_registry, env_api_key_names, find_env_keys, get_env_api_key
from ._render import rich_available
from ._run import EXIT_USAGE, FAUX_PROVIDER_NAME, offline_provider

__all__ = [
    "COLUMNS",
    "UNSERVED_MARK",
    "ModelFilter",
    "format_tokens",
    "model_row",
    "models_command",
]

# No name column: it mostly repeats the id, and the table must fit a terminal (search
# words still match names).
COLUMNS = ("model", "api", "context", "max out", "thinking", "input", "$/M in", "$/M out")
_NUMERIC = frozenset({"context", "max out", "$/M in", "$/M out"})
# Marks the api cell of a model this installation has no provider for.
UNSERVED_MARK = "*"


def format_tokens(n: int) -> str:
    """A token count in thousands, the one unit of the table: ``1,049k``, ``131k``, ``0.5k``."""
    if n >= 1000 or n == 0:
        return f"{n / 1000:,.0f}k"
    return f"{n / 1000:.1f}k"


def _price(value: float) -> str:
    return f"{value:g}"


def _thinking(model: Model) -> str:
    """``no``, or the highest thinking level the model supports."""
    if not model.reasoning:
        return "no"
    levels = [level for level in get_supported_thinking_levels(model) if level != "off"]
    return levels[-1] if levels else "no"


def model_row(model: Model, served: frozenset[str]) -> tuple[str, ...]:
    """The text cells of one model, in ``COLUMNS`` order."""
    api = model.api if model.api in served else f"{model.api}{UNSERVED_MARK}"
    return (
        f"{model.provider}/{model.id}",
        api,
        format_tokens(model.context_window),
        format_tokens(model.max_tokens),
        _thinking(model),
        "+".join(model.input),
        _price(model.cost.input),
        _price(model.cost.output),
    )


@dataclass(frozen=True)
class ModelFilter:
    """Which models to list: all search words (any case) in ``provider/id`` or the name,
    and the capabilities asked for."""

    words: tuple[str, ...] = ()
    reasoning: bool = False
    images: bool = False

    def __call__(self, model: Model) -> bool:
        if self.reasoning and not model.reasoning:
            return False
        if self.images and "image" not in model.input:
            return False
        text = f"{model.provider}/{model.id} {model.name}".casefold()
        return all(word.casefold() in text for word in self.words)

    def describe(self) -> str:
        """The criteria in words (``"'haiku' and image input"``); empty for no criteria."""
        parts = [repr(" ".join(self.words))] if self.words else []
        if self.reasoning:
            parts.append("reasoning")
        if self.images:
            parts.append("image input")
        return " and ".join(parts)


def _key_status(provider: str) -> str:
    if provider == FAUX_PROVIDER_NAME:
        return "offline, no key needed"
    names = env_api_key_names(provider)
    if not names:
        found = get_env_api_key(provider) is not None
        return "credentials found in the environment" if found else "no credentials found"
    found_names = find_env_keys(provider)
    if found_names:
        return f"key set ({', '.join(found_names)})"
    return f"key not set: export {names[0]}=..."


def _groups(
    providers: Sequence[str], keep: ModelFilter
) -> tuple[list[tuple[str, int, list[Model]]], int]:
    """``(provider, models it has, models kept)`` for every provider with a kept model,
    and how many models the providers have in all."""
    groups = []
    listed = 0
    for provider in providers:
        models = _faux_models() if provider == FAUX_PROVIDER_NAME else get_models(provider)
        listed += len(models)
        kept = [m for m in models if keep(m)]
        if kept:
            groups.append((provider, len(models), kept))
    return groups, listed


def _faux_models() -> list[Model]:
    """The offline models, their api shown as ``faux`` (the real one is made per run)."""
    return [msgspec.structs.replace(m, api=FAUX_PROVIDER_NAME) for m in offline_provider().models]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def models_command(
    *,
    out: TextIO,
    err: TextIO,
    provider: str | None = None,
    words: Sequence[str] = (),
    reasoning: bool = False,
    images: bool = False,
    style: str = "auto",
) -> int:
    providers = [*get_providers(), FAUX_PROVIDER_NAME]
    if provider is not None:
        if provider not in providers:
            close = difflib.get_close_matches(provider, providers, n=3)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            err.write(
                f"pi-trio: unknown provider {provider!r}; {hint}"
                "`pi-trio models` lists every provider\n"
            )
            return EXIT_USAGE
        providers = [provider]
    keep = ModelFilter(tuple(words), reasoning, images)
    groups, listed = _groups(providers, keep)
    shown = sum(len(kept) for _, _, kept in groups)
    criteria = keep.describe()
    if criteria:
        summary = f"{shown:,} of {_count(listed, 'model')} match {criteria}"
    else:
        summary = _count(shown, "model")
    summary += f", from {_count(len(groups), 'provider')}"
    served = frozenset([*default_registry.apis(), FAUX_PROVIDER_NAME])
    sections = [
        (
            f"{name} · {'' if len(kept) == size else f'{len(kept)} of '}{_count(size, 'model')}"
            f" · {_key_status(name)}",
            [model_row(m, served) for m in kept],
        )
        for name, size, kept in groups
    ]
    out.write(f"{summary}; context and max out in thousands of tokens, prices in $ per million\n")
    use_rich = style == "rich" or (style == "auto" and out.isatty() and rich_available())
    if use_rich:
        _rich_sections(sections, out)
    else:
        _plain_sections(sections, out)
    unserved = sorted({m.api for _, _, kept in groups for m in kept} - served)
    if unserved:
        out.write(
            f"\n{UNSERVED_MARK} not callable from this installation yet: {', '.join(unserved)}\n"
        )
    if not groups:
        out.write("no model matches; try fewer search words or filters\n")
    else:
        out.write('use one with: pi-trio run "..." --model provider/model-id\n')
    return 0


def _lines(rows: Sequence[Sequence[str]]) -> list[str]:
    """``COLUMNS`` and ``rows`` aligned: text left, numbers right. Widths are per provider,
    so a long id elsewhere does not widen every row."""
    table = [COLUMNS, *rows]
    widths = [max(len(cell) for cell in column) for column in zip(*table, strict=True)]
    return [
        "  "
        + "  ".join(
            cell.rjust(width) if column in _NUMERIC else cell.ljust(width)
            for cell, width, column in zip(row, widths, COLUMNS, strict=True)
        ).rstrip()
        for row in table
    ]


def _plain_sections(sections: list[tuple[str, list[tuple[str, ...]]]], out: TextIO) -> None:
    for title, group in sections:
        out.write(f"\n{title}\n")
        out.writelines(f"{line}\n" for line in _lines(group))


def _rich_sections(sections: list[tuple[str, list[tuple[str, ...]]]], out: TextIO) -> None:
    """The plain layout with styles: bold provider lines, a dim header, dim rows for models
    this installation cannot call. (A rich ``Table`` per provider takes most of a second
    for the whole catalog and squeezes columns on narrow terminals.)"""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False)
    for title, group in sections:
        text = Text("\n")
        text.append(title, style="bold")
        header, *lines = _lines(group)
        text.append(f"\n{header}", style="dim underline")
        for row, line in zip(group, lines, strict=True):
            text.append(f"\n{line}", style="dim" if row[1].endswith(UNSERVED_MARK) else "")
        console.print(text, soft_wrap=True)
