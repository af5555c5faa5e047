"""``AgentTool`` and the ``tool`` decorator that builds one from a typed function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, get_type_hints, overload

import msgspec

from ..ai import TextContent
from ._approval import ApprovalPolicy, check_approval_policy
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
    as interrupted instead. ``output_schema`` is the JSON schema of the
    ``structured_content`` its successful results carry, for programmatic callers. Like
    ``label``, neither is ever declared to the model. ``needs_approval`` makes a call wait
    for a person: ``True`` for every call, or a function of the validated arguments
    returning whether this one waits (sync or async); the run pauses instead of running
    it, and ``Agent.resume`` continues once it is decided.
    """

    __slots__ = (
        "constrained_sampling",
        "description",
        "execute",
        "execution_mode",
        "label",
        "name",
        "needs_approval",
        "output_schema",
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
        output_schema: dict[str, Any] | None = None,
        needs_approval: ApprovalPolicy = False,
    ) -> None:
        if not isinstance(parameters, dict):
            raise TypeError(
                f"AgentTool {name!r}: parameters must be a JSON schema dict, got {parameters!r}"
            )
        _check_options(f"AgentTool {name!r}", execution_mode, timeout)
        if replay not in ("never", "safe"):
            raise ValueError(
                f"AgentTool {name!r}: replay must be 'never' or 'safe', got {replay!r}"
            )
        check_approval_policy(f"AgentTool {name!r}", needs_approval)
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
        if output_schema is not None and not isinstance(output_schema, dict):
            raise TypeError(
                f"AgentTool {name!r}: output_schema must be a JSON schema dict or None, "
                f"got {output_schema!r}"
            )
        self.output_schema = output_schema
        self.needs_approval = needs_approval

    def __repr__(self) -> str:
        return f"AgentTool(name={self.name!r}, label={self.label!r})"


# What the model can be given a schema for; said when an annotation has none.
_SUPPORTED_TYPES = (
    "str, int, float, bool, None, lists, dicts with str keys, Literal, Enum, Optional, "
    "a msgspec.Struct, a dataclass or a TypedDict of those"
)


def _check_options(where: str, execution_mode: object, timeout: object) -> None:
    if execution_mode not in (None, "sequential", "parallel"):
        raise ValueError(
            f"{where}: execution_mode must be 'sequential', 'parallel' or None, "
            f"got {execution_mode!r}"
        )
    if timeout is None:
        return
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
        raise TypeError(f"{where}: timeout must be a number of seconds (e.g. 30), got {timeout!r}")
    if not timeout > 0:
        raise ValueError(f"{where}: timeout must be positive seconds (e.g. 30), got {timeout!r}")


def _type_text(hint: Any) -> str:
    return hint.__qualname__ if isinstance(hint, type) else repr(hint)


def _annotation_error(tool_name: str, fields: list[tuple[Any, ...]]) -> TypeError | None:
    """The first parameter whose annotation has no JSON schema, as an error naming the
    tool, the parameter and the types that work."""
    for name, hint, *_ in fields:
        try:
            msgspec.json.schema(hint)
        except (TypeError, ValueError) as exc:
            reason = str(exc).strip().splitlines()[-1]
            return TypeError(
                f"@tool {tool_name!r}: parameter {name!r} is annotated {_type_text(hint)}, "
                f"which has no JSON schema for the model ({reason}); use {_SUPPORTED_TYPES}"
            )
    return None


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
    needs_approval: ApprovalPolicy = False,
) -> AgentTool:
    tool_name = name or fn.__name__
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"@tool {tool_name!r}: an annotation names something undefined ({exc}); define "
            "or import it before the function"
        ) from exc
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
    try:
        parameters = _inline_schema(params_type, tool_name)
    except (TypeError, ValueError):
        error = _annotation_error(tool_name, fields)
        if error is None:
            raise
        raise error from None  # the error holds msgspec's reason; its long text adds nothing
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
        needs_approval=needs_approval,
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
    needs_approval: ApprovalPolicy = False,
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
    needs_approval: ApprovalPolicy = False,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Build an ``AgentTool`` from a type-annotated function.

    The parameters' annotations become the JSON schema (via msgspec), arguments are
    converted to those types before the call, and the docstring is the description.
    Parameters named ``tool_call_id``, ``signal`` or ``on_update`` receive the runtime's
    values instead. A ``str`` return becomes the text content; other values are sent as
    JSON and kept in ``details``; return an ``AgentToolResult`` for full control.
    ``needs_approval`` is ``AgentTool``'s (a predicate gets the arguments as the model
    sent them, a dict)::

        @tool
        async def add(a: int, b: int) -> str:
            "Add two integers."
            return str(a + b)
    """

    if fn is not None and not callable(fn):
        hint = f"; give the name as @tool(name={fn!r})" if isinstance(fn, str) else ""
        raise TypeError(
            "tool() takes the function to turn into a tool (@tool or @tool(timeout=30, ...) "
            f"above a def), got {fn!r}{hint}"
        )
    _check_options("@tool", execution_mode, timeout)
    check_approval_policy("@tool", needs_approval)

    def decorate(f: Callable[..., Any]) -> AgentTool:
        if not callable(f):
            raise TypeError(f"@tool(...) decorates a function, got {f!r}")
        return _build(
            f,
            name=name,
            description=description,
            label=label,
            execution_mode=execution_mode,
            timeout=timeout,
            replay=replay,
            needs_approval=needs_approval,
        )

    if fn is not None:
        return decorate(fn)
    return decorate
