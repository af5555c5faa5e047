"""The Agent's arguments, checked where they are given.

A wrong value is a ``TypeError`` / ``ValueError`` (``UnknownModelError`` for a model name
the catalog does not know) whose one line names the argument, the value and what is
expected, at ``Agent(...)``, ``agent.subscribe(...)`` or an assignment to
``agent.state``, instead of a failed run later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..ai import Model, UnknownModelError, resolve_model
from ..ai._seam import THINKING_LEVELS

__all__ = [
    "MODEL_HINT",
    "check_callable",
    "check_message",
    "check_messages",
    "check_model",
    "check_run_settings",
    "check_thinking_level",
    "check_tools",
]

MODEL_HINT: Final = (
    "a catalog name such as 'anthropic/claude-haiku-4-5' (`pi-trio models` lists them) or "
    "a Model; offline, a FauxProvider from pi_trio.testing: "
    "Agent(model=faux.get_model(), stream_fn=faux)"
)
_FAUX_PROVIDER: Final = "faux"


def _given(where: str, value: object) -> str:
    """``Agent(model=...)`` with the value in place of the dots."""
    return where.replace("...", repr(value)) if "..." in where else f"{where} = {value!r}"


def check_model(model: object, where: str) -> Model:
    """``model`` as a ``Model``: a ``Model`` as it is, a ``"provider/model-id"`` resolved
    from the catalog. ``where`` names the argument in the error (``Agent(model=...)``)."""
    if isinstance(model, Model):
        return model
    if isinstance(model, str):
        if model.partition("/")[0] == _FAUX_PROVIDER:
            raise UnknownModelError(
                f"{_given(where, model)}: that is the command line's offline model; in "
                "code, use a FauxProvider from pi_trio.testing: "
                "Agent(model=faux.get_model(), stream_fn=faux)"
            )
        try:
            return resolve_model(model)
        except UnknownModelError as exc:
            raise UnknownModelError(f"{_given(where, model)}: {exc}") from exc
    if model is None:
        raise TypeError(f"{where} is required: {MODEL_HINT}")
    raise TypeError(f"{where} takes a Model or 'provider/model-id', got {model!r}")


def check_thinking_level(level: object, where: str) -> str:
    if level not in THINKING_LEVELS:
        raise ValueError(f"{where} must be one of {', '.join(THINKING_LEVELS)}; got {level!r}")
    return str(level)


def check_callable(value: object, where: str, shape: str) -> None:
    """``value`` must be callable (``shape`` says how it is called) or ``None``."""
    if value is not None and not callable(value):
        raise TypeError(f"{where} takes a function called as {shape}, got {value!r}")


_MESSAGE: Final = "a message (an object with a role, such as a UserMessage)"


def check_message(message: object, where: str) -> None:
    """A message for the transcript is any object with a ``role`` (a ``UserMessage``, an
    assistant, tool-result or system message, or a message of your own)."""
    if not isinstance(getattr(message, "role", None), str):
        raise TypeError(f"{where} takes a str or {_MESSAGE}, got {message!r}")


def check_messages(messages: Sequence[object], where: str, str_hint: str = "") -> None:
    """Each item of a list given as messages is a message; ``str_hint`` is added when an
    item is a ``str``."""
    for index, message in enumerate(messages):
        if not isinstance(getattr(message, "role", None), str):
            hint = str_hint if isinstance(message, str) else ""
            raise TypeError(f"{where}: item {index} is {message!r}, not {_MESSAGE}{hint}")


def check_tools(tools: object) -> list[Any]:
    if tools is None:
        return []
    # a list or tuple first: ``isinstance`` against ``Sequence`` (an ABC) costs a microsecond
    if (
        type(tools) is not list
        and type(tools) is not tuple
        and (isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence))
    ):
        raise TypeError(f"Agent(tools=...) takes a list of tools, got {tools!r}")
    for index, item in enumerate(tools):
        if not all(hasattr(item, name) for name in ("name", "description", "parameters")):
            raise TypeError(
                f"Agent(tools=...): tools[{index}] is {item!r}; expected an AgentTool "
                "(e.g. from @tool) or a Tool"
            )
    return list(tools)


def check_run_settings(*, messages: object, system_prompt: object, stream_fn: object) -> None:
    """The Agent's other arguments whose mistakes would surface only in a run (the
    groups check their own: ``RunPolicy``, ``OutputSettings``, ``AgentHooks``)."""
    if messages is not None and (
        isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence)
    ):
        raise TypeError(
            f"Agent(messages=...) takes a list of messages (the transcript), got {messages!r}"
        )
    check_messages(messages or (), "Agent(messages=...)")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise TypeError(f"Agent(system_prompt=...) takes a str, got {system_prompt!r}")
    check_callable(stream_fn, "Agent(stream_fn=...)", "stream_fn(model, context, options, send)")
