"""``pi-trio models``: the model catalog as a table, and which provider keys are set."""

from __future__ import annotations

from typing import TextIO

from ..ai import Model, env_api_key_names, find_env_keys, get_models, get_providers
from ._render import rich_available
from ._run import EXIT_USAGE

__all__ = ["COLUMNS", "model_rows", "models_command"]

COLUMNS = ("model", "name", "api", "context", "max out", "thinking", "input", "$/M in", "$/M out")


def _tokens(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000:
        return f"{n / 1000:g}k" if n % 1000 == 0 else f"{n / 1000:.1f}k"
    return str(n)


def _price(value: float) -> str:
    return f"{value:g}"


def model_rows(models: list[Model]) -> list[tuple[str, ...]]:
    """One row of text cells per model, in ``COLUMNS`` order."""
    return [
        (
            f"{m.provider}/{m.id}",
            m.name,
            m.api,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "+".join(m.input),
            _price(m.cost.input),
            _price(m.cost.output),
        )
        for m in models
    ]


def _key_lines(providers: list[str]) -> list[str]:
    lines = []
    for provider in providers:
        names = env_api_key_names(provider)
        if not names:
            continue
        found = find_env_keys(provider)
        state = f"set ({', '.join(found)})" if found else f"not set: export {names[0]}=..."
        lines.append(f"{provider}: {state}")
    return lines


def _plain_table(rows: list[tuple[str, ...]], out: TextIO) -> None:
    widths = [max(len(cell) for cell in column) for column in zip(COLUMNS, *rows, strict=False)]
    for row in (COLUMNS, *rows):
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        out.write("\n")


def _rich_table(rows: list[tuple[str, ...]], out: TextIO, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    for column in COLUMNS:
        numeric = column.startswith("$") or column in ("context", "max out")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column == "model")
    for row in rows:
        table.add_row(*row)
    Console(file=out).print(table)


def models_command(
    *, out: TextIO, err: TextIO, provider: str | None = None, style: str = "auto"
) -> int:
    providers = get_providers()
    if provider is not None:
        if provider not in providers:
            err.write(
                f"pi-trio: unknown provider {provider!r}; known providers: {', '.join(providers)}\n"
            )
            return EXIT_USAGE
        providers = [provider]
    models = [model for name in providers for model in get_models(name)]
    rows = model_rows(models)
    use_rich = style == "rich" or (style == "auto" and out.isatty() and rich_available())
    if use_rich:
        _rich_table(rows, out, f"{len(rows)} models · prices in $ per million tokens")
    else:
        _plain_table(rows, out)
    out.write("\nAPI keys (from the environment):\n")
    out.writelines(f"  {line}\n" for line in _key_lines(providers))
    out.write('use one with: pi-trio run "..." --model provider/model-id\n')
    return 0
