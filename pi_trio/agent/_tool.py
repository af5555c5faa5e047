"""``AgentTool`` and the ``tool`` decorator that builds one from a typed function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, get_type_hints, overload

import msgspec

from ..ai import TextContent
from ._types import AgentToolResult

__all__ = ["AgentTool", "tool"]

# Parameters the runtime fills in by name; they are not part of the model-facing schema.
_RUNTIME_PARAMETERS = frozenset({"tool_call_id", "signal", "on_update"})


class AgentTool:
    """A tool the agent can execute.

    ``execute(tool_call_id, params, signal, on_update)`` does the work (async, or sync for
    quick pure functions) and returns an ``AgentToolResult`` (a ``str`` or a dict of its
    fields is accepted too); raising, or returning ``is_error=True``, reports a failure.
    ``parameters`` is the JSON schema the arguments are validated against.
    ``prepare_arguments(raw) -> args`` (sync) adapts old argument shapes before
    validation. ``execution_mode="sequential"`` makes every batch containing this tool run
    sequentially. ``timeout`` (seconds) gives the call an error result
    ``Tool "<name>" timed out after <t>s`` when it runs longer. ``replay`` is the recovery
    policy of a durable run for a call that was started but whose outcome is unknown (the
    process died meanwhile): ``"safe"`` runs it again, ``"never"`` (the default) reports it
    as interrupted instead. Like ``label`` it is never declared to the model.
    """

    __slots__ = (
        "constrained_sampling",
        "description",
        "execute",
        "execution_mode",
        "label",
        "name",
        "parameters",
        "prepare_arguments",
        "replay",
        "timeout",
    )

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        execute: Callable[..., Any],
        label: str | None = None,
        prepare_arguments: Callable[[Any], Any] | None = None,
        execution_mode: Literal["sequential", "parallel"] | None = None,
        timeout: float | None = None,
        constrained_sampling: Any = None,
        replay: Literal["never", "safe"] = "never",
    ) -> None:
        if not isinstance(parameters, dict):
            raise TypeError(
                f"AgentTool {name!r}: parameters must be a JSON schema dict, got {parameters!r}"
            )
        if timeout is not None and timeout <= 0:
            raise ValueError(
                f"AgentTool {name!r}: timeout must be positive seconds, got {timeout!r}"
            )
        if replay not in ("never", "safe"):
            raise ValueError(
                f"AgentTool {name!r}: replay must be 'never' or 'safe', got {replay!r}"
            )
        self.name = name
        self.label = label or name
        self.description = description
        self.parameters = parameters
        self.execute = execute
        self.prepare_arguments = prepare_arguments
        self.execution_mode = execution_mode
        self.timeout = timeout
        self.constrained_sampling = constrained_sampling
        self.replay: Literal["never", "safe"] = replay

    def __repr__(self) -> str:
        return f"AgentTool(name={self.name!r}, label={self.label!r})"


def _inline_schema(struct_type: type, name: str) -> dict[str, Any]:
    schema = msgspec.json.schema(struct_type)
    defs: dict[str, Any] = schema.get("$defs", {})
    ref = schema.get("$ref", "")
    key = ref.rsplit("/", 1)[-1]
    body = dict(defs.pop(key, schema))
    body.pop("title", None)
    if defs:
        body["$defs"] = defs
    body.setdefault("properties", {})
    return body


def _build(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    label: str | None,
    execution_mode: Literal["sequential", "parallel"] | None,
    timeout: float | None,
    replay: Literal["never", "safe"] = "never",
) -> AgentTool:
    tool_name = name or fn.__name__
    signature = inspect.signature(fn)
    hints = get_type_hints(fn, include_extras=True)
    fields: list[tuple[Any, ...]] = []
    runtime: list[str] = []
    for p in signature.parameters.values():
        if p.name in _RUNTIME_PARAMETERS:
            runtime.append(p.name)
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(
                f"@tool {tool_name!r}: *args/**kwargs cannot be described to a model; "
                "declare each parameter with a type annotation"
            )
        if p.name not in hints:
            raise TypeError(
                f"@tool {tool_name!r}: parameter {p.name!r} needs a type annotation "
                "(it becomes the JSON schema the model sees)"
            )
        if p.default is inspect.Parameter.empty:
            fields.append((p.name, hints[p.name]))
        else:
            fields.append((p.name, hints[p.name], p.default))
    params_type = msgspec.defstruct(
        f"{tool_name}_params", fields, kw_only=True, forbid_unknown_fields=True
    )
    parameters = _inline_schema(params_type, tool_name)
    doc = description if description is not None else inspect.getdoc(fn)
    if not doc:
        raise TypeError(
            f"@tool {tool_name!r}: give the function a docstring (or description=...); "
            "it tells the model what the tool does"
        )
    field_names = [f[0] for f in fields]

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        args = msgspec.convert(params, params_type, strict=False)
        kwargs = {n: getattr(args, n) for n in field_names}
        extra = {"tool_call_id": tool_call_id, "signal": signal, "on_update": on_update}
        for n in runtime:
            kwargs[n] = extra[n]
        value = fn(**kwargs)
        if inspect.isawaitable(value):
            value = await value
        return _as_result(value)

    return AgentTool(
        name=tool_name,
        description=doc,
        parameters=parameters,
        execute=execute,
        label=label,
        execution_mode=execution_mode,
        timeout=timeout,
        replay=replay,
    )


def _as_result(value: Any) -> AgentToolResult:
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, str):
        return AgentToolResult(content=[TextContent(text=value)])
    if value is None:
        return AgentToolResult()
    text = msgspec.json.encode(value).decode()
    return AgentToolResult(content=[TextContent(text=text)], details=value)


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: Literal["sequential", "parallel"] | None = None,
    timeout: float | None = None,
    replay: Literal["never", "safe"] = "never",
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: Literal["sequential", "parallel"] | None = None,
    timeout: float | None = None,
    replay: Literal["never", "safe"] = "never",
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Build an ``AgentTool`` from a type-annotated function.

    The parameters' annotations become the JSON schema (via msgspec), arguments are
    converted to those types before the call, and the docstring is the description.
    Parameters named ``tool_call_id``, ``signal`` or ``on_update`` receive the runtime's
    values instead. A ``str`` return becomes the text content; other values are sent as
    JSON and kept in ``details``; return an ``AgentToolResult`` for full control::

        @tool
        async def add(a: int, b: int) -> str:
            "Add two integers."
            return str(a + b)
    """

    def decorate(f: Callable[..., Any]) -> AgentTool:
        return _build(
            f,
            name=name,
            description=description,
            label=label,
            execution_mode=execution_mode,
            timeout=timeout,
            replay=replay,
        )

    if fn is not None:
        return decorate(fn)
    return decorate
