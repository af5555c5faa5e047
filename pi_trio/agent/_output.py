"""A run's typed output: ``output=OutputSettings(type=...)`` on ``Agent(...)``, or
``output_type=`` on ``prompt()`` and ``continue_()``.

The final answer is produced and validated as the output type: a msgspec Struct, a
dataclass, a TypedDict, or any other type msgspec describes (a type whose schema is not an
object, such as ``list[int]``, travels as ``{"result": ...}``). Schema from
``msgspec.json.schema``, validation with msgspec, so a failure names the field
(``Expected `int`, got `str` - at `$.temp_c```). Two ways, chosen per run:

- **native**: every request of the run carries ``StreamOptions.output_format``, which the
  provider maps to its JSON-schema output; the final assistant message's text is the JSON.
- **tool**: the run gets one more tool, ``final_result``, whose parameters are the schema;
  the model answers by calling it and the run ends once the arguments are valid; the
  transcript keeps that call (its arguments are the JSON) and its result.

``OutputSettings(mode="auto")`` picks native when the model takes it
(``supports_json_schema_output``) and the agent calls the registry's providers (a custom
``stream_fn`` may not read ``output_format``), else tool. A wrong answer goes back to the
model with the error, as a user message (native, or a text answer in tool mode) or as the
error result of the ``final_result`` call, at most ``OutputSettings.max_retries`` times; then the
run ends and ``RunResult.output`` raises ``OutputValidationError``.

The loop is driven through its hooks alone, wrapped around the Agent's own:
``finish_turn`` checks each answer (``"continue"`` asks for a correction, ``"end"`` stops
after a final result or the last failure) and ``prepare_next_turn`` adds the correction.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    Model,
    StreamOptions,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from ..ai.models import supports_json_schema_output
from ..ai.providers import now_ms
from ._approval import PendingApproval
from ._config import AgentLoopConfig, FinishTurnHook, PrepareNextTurnHook, turn_decision
from ._hooks import call_hook, coerce_result, next_turn_arguments
from ._output_schema import OutputSchema, output_schema
from ._result import NO_OUTPUT, RunResult
from ._tool import AgentTool
from ._types import AgentContext, AgentLoopTurnUpdate, AgentToolResult, AgentTurnContext

__all__ = ["DEFAULT_MAX_OUTPUT_RETRIES", "FINAL_RESULT_TOOL", "OutputMode", "OutputRun"]

OutputMode: TypeAlias = Literal["auto", "native", "tool"]

FINAL_RESULT_TOOL: Final = "final_result"
DEFAULT_MAX_OUTPUT_RETRIES: Final = 2


def _text(message: Any) -> str:
    """The text blocks of an assistant or tool-result message, joined."""
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


class OutputRun:
    """One run's way to its typed output: the hooks that drive the loop (see the module
    docstring) and what came of it (``value``, else ``error``)."""

    __slots__ = (
        "_correction",
        "_finish_turn",
        "_prepare_next_turn",
        "_tool_error",
        "_values",
        "error",
        "failures",
        "max_retries",
        "mode",
        "schema",
        "value",
    )

    def __init__(
        self, schema: OutputSchema, mode: Literal["native", "tool"], max_retries: int
    ) -> None:
        self.schema = schema
        self.mode = mode
        self.max_retries = max_retries
        self.value: Any = NO_OUTPUT
        self.error: str | None = None
        self.failures = 0
        self._correction: str | None = None
        self._values: dict[str, Any] = {}  # final_result call id -> its value
        self._tool_error: str | None = None  # why the last final_result call was refused
        self._finish_turn: FinishTurnHook | None = None
        self._prepare_next_turn: PrepareNextTurnHook | None = None

    @classmethod
    def start(
        cls,
        output_type: Any,
        mode: OutputMode,
        max_retries: int,
        model: Model,
        stream_fn: Any,
        tools: list[Any],
    ) -> OutputRun | None:
        """The output run of ``output_type`` (``None``: none asked for), its mode
        resolved for ``model``; a type msgspec cannot describe fails here, before the
        run starts."""
        if output_type is None:
            return None
        schema = output_schema(output_type)
        if mode == "auto":
            native = stream_fn is None and supports_json_schema_output(
                model, schema.schema, with_tools=bool(tools)
            )
            mode = "native" if native else "tool"
        if mode == "tool" and any(getattr(t, "name", None) == FINAL_RESULT_TOOL for t in tools):
            raise ValueError(
                f"a tool is already named {FINAL_RESULT_TOOL!r}, the name of the tool that "
                "takes the typed output; rename that tool or use OutputSettings(mode='native')"
            )
        return cls(schema, mode, max_retries)

    def configure(self, config: AgentLoopConfig, context: AgentContext) -> AgentLoopConfig:
        """``config`` with this run's hooks around the Agent's own (and, natively, the
        output format on every request); in tool mode ``context`` gets ``final_result``."""
        self._finish_turn = config.finish_turn
        self._prepare_next_turn = config.prepare_next_turn
        changes: dict[str, Any] = {
            "finish_turn": self.finish_turn,
            "prepare_next_turn": self.prepare_next_turn,
        }
        if self.mode == "native":
            options = config.stream_options or StreamOptions()
            changes["stream_options"] = msgspec.structs.replace(
                options, output_format=self.schema.output_format()
            )
        else:
            context.tools.append(self.tool())
        return msgspec.structs.replace(config, **changes)

    # ------------------------------------------------------------------ the hooks

    async def finish_turn(self, turn: AgentTurnContext, signal: AbortSignal) -> str | None:
        decision = None
        if self._finish_turn is not None:
            decision = turn_decision(await call_hook(self._finish_turn, turn, signal))
        message = turn.message
        if not isinstance(message, AssistantMessage) or message.stop_reason in (
            "error",
            "aborted",
        ):
            return decision
        verdict = self._judge(turn, message)
        if verdict == "end" or decision == "end":
            self._correction = None
            return "end"
        return verdict or decision

    async def prepare_next_turn(
        self, turn: AgentTurnContext, signal: AbortSignal
    ) -> AgentLoopTurnUpdate | None:
        update = None
        hook = self._prepare_next_turn
        if hook is not None:
            raw = await call_hook(hook, *next_turn_arguments(hook, turn, signal))
            update = coerce_result(raw, AgentLoopTurnUpdate, "prepare_next_turn")
        correction, self._correction = self._correction, None
        if correction is None:
            return update
        message = UserMessage(content=[TextContent(text=correction)], timestamp=now_ms())
        if update is None:
            return AgentLoopTurnUpdate(messages=[message])
        return msgspec.structs.replace(update, messages=[*(update.messages or []), message])

    # ------------------------------------------------------------------ judging answers

    def _judge(self, turn: AgentTurnContext, message: AssistantMessage) -> str | None:
        """``None`` (nothing to say: no answer yet, or a valid native one), ``"continue"``
        (ask again) or ``"end"`` (a final result, or the last failure)."""
        calls = [b for b in message.content if isinstance(b, ToolCall)]
        if self.mode == "native":
            if calls:
                return None
            try:
                self.value = self.schema.from_text(_text(message))
            except ValueError as exc:
                return self._failed(
                    str(exc),
                    f"Your answer is not valid {self.schema.name} JSON: {exc}. "
                    "Answer again with only the corrected JSON.",
                )
            self.error = None
            self.failures = 0
            return None
        finals = [c for c in calls if c.name == FINAL_RESULT_TOOL]
        accepted = [
            r
            for r in turn.tool_results
            if r.tool_name == FINAL_RESULT_TOOL
            and not r.is_error
            and r.tool_call_id in self._values
        ]
        if accepted:
            self.value = self._values[accepted[-1].tool_call_id]
            self.error = None
            return "end"
        if finals:
            # the error result already told the model what is wrong
            failed = [r for r in turn.tool_results if r.tool_name == FINAL_RESULT_TOOL]
            text = self._tool_error or (_text(failed[-1]) if failed else "the call did not run")
            self._tool_error = None
            return self._failed(text, None)
        if calls:
            return None
        return self._failed(
            f"the model answered in text instead of calling {FINAL_RESULT_TOOL}",
            f"Give your final answer by calling the {FINAL_RESULT_TOOL} tool with it as the "
            "arguments; a text answer does not count.",
        )

    def _failed(self, error: str, correction: str | None) -> str | None:
        self.failures += 1
        self.error = error
        self.value = NO_OUTPUT
        if self.failures > self.max_retries:
            return "end"
        self._correction = correction
        return "continue" if correction is not None else None

    # ------------------------------------------------------------------ the tool

    def tool(self) -> AgentTool:
        """``final_result``: its parameters are the output schema. Its arguments are
        checked by msgspec before the schema check, so a wrong answer is told in the
        same words as in native mode, naming the field."""
        schema = self.schema
        values = self._values

        def prepare_arguments(arguments: Any) -> Any:
            try:
                schema.from_arguments(arguments)
            except ValueError as exc:
                self._tool_error = str(exc)
                raise ValueError(
                    f"Invalid {schema.name}: {exc}. "
                    f"Call {FINAL_RESULT_TOOL} again with corrected arguments."
                ) from None
            return arguments

        def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            values[tool_call_id] = schema.from_arguments(params)
            return AgentToolResult(
                content=[TextContent(text="Final result received.")], terminate=True
            )

        about = f" ({schema.description})" if schema.description else ""
        return AgentTool(
            name=FINAL_RESULT_TOOL,
            description=(
                f"Give your final answer{about}: call this tool with the answer as its "
                "arguments. The run ends once they are valid."
            ),
            parameters=schema.schema,
            execute=execute,
            prepare_arguments=prepare_arguments,
        )

    def result(
        self,
        messages: list[Any],
        *,
        aborted: bool = False,
        spent: Usage | None = None,
        pending_approvals: tuple[PendingApproval, ...] = (),
    ) -> RunResult[Any]:
        """What the run returns: its messages and the output (or why there is none);
        ``aborted`` is whether the run's signal was aborted."""
        value = self.value
        error = self.failure_text() if value is NO_OUTPUT else None
        return RunResult(
            messages,
            output_type=self.schema.type,
            output=value,
            output_error=error,
            aborted=aborted,
            spent=spent,
            pending_approvals=pending_approvals,
        )

    def failure_text(self) -> str:
        """Why the run has no output."""
        if self.error is None:
            return f"The run ended before the model gave its final answer as {self.schema.name}"
        attempts = self.failures
        plural = "s" if attempts != 1 else ""
        return (
            f"The model's answer did not validate as {self.schema.name} "
            f"after {attempts} attempt{plural}: {self.error}"
        )
