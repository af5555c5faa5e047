"""The AG-UI endpoint as an ASGI application: ``AGUIApp``.

``POST <path>`` takes a ``RunAgentInput`` and answers with the run's AG-UI events as
Server-Sent Events: ``RUN_STARTED``, what the agent streams (``_translate``), then
``RUN_FINISHED`` or ``RUN_ERROR``. Each request gets its own ``Agent`` from the
application's factory, which is handed the ``AguiRun`` (the input and the shared state).
The thread's messages become the agent's transcript after its system prompt, the
client's tools are declared next to the agent's own, and the run is
``agent.continue_()``.

Stopping a run is ``agent.abort()``, with its contract (the aborted answer keeps what was
streamed, every tool call gets a result, the run closes with ``RUN_FINISHED`` and the
``cancelled`` outcome): when the client goes away (``HttpAgent.abortRun()`` of the
AG-UI client closes the request), or on ``POST <path>/cancel`` with ``{"threadId",
"runId"}``, which lets the client read the run's last events.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, TypeAlias

import anyio
import msgspec
from ag_ui.core import (
    BaseEvent,
    RunAgentInput,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError

from ..agent import Agent
from ..agent.extend import call_hook
from ..agent.hooks import AgentTurnContext
from ._input import InputError, apply_patch, client_tool, to_transcript
from ._translate import EventTranslator

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_RUNS",
    "AGUIApp",
    "AgentFactory",
    "AguiRun",
]

Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send: TypeAlias = Callable[[MutableMapping[str, Any]], Awaitable[None]]

# A run's input is the whole thread, images included (base64): 16 MiB bounds what one
# request makes the server buffer.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024

# Runs at once; each holds an agent, a model request and a connection.
DEFAULT_MAX_RUNS = 64

# Seconds a client has to send its request body (a stalled upload is answered 408).
DEFAULT_BODY_TIMEOUT_S = 30.0

# Upper bound on the shielded last write of a stream.
_LAST_SEND_TIMEOUT_S = 5.0

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]

_ENCODER = EventEncoder()


class _Stream:
    """The response of one run: events go out one write at a time (the agent's listener
    and a tool's state update may both send); after the client left they are dropped."""

    def __init__(self, send: Send, on_gone: Callable[[], None]) -> None:
        self._send = send
        self._on_gone = on_gone
        self._lock = anyio.Lock()
        self.gone = False

    async def emit(self, events: Sequence[BaseEvent], *, last: bool = False) -> None:
        if self.gone or not (events or last):
            return
        body = "".join(_ENCODER.encode(event) for event in events).encode()
        message = {"type": "http.response.body", "body": body, "more_body": not last}
        async with self._lock:
            try:
                if last:  # a disconnect reported meanwhile must not cancel the close
                    with anyio.move_on_after(_LAST_SEND_TIMEOUT_S, shield=True):
                        await self._send(message)
                else:
                    await self._send(message)
            except OSError:  # servers that report a closed connection on send
                self.left()

    def left(self) -> None:
        if not self.gone:
            self.gone = True
            self._on_gone()


class AguiRun:
    """One AG-UI run, as the agent factory and its tools see it: ``input`` (the
    ``RunAgentInput``), ``thread_id``, ``run_id`` and ``state``, the shared state (a copy
    of the input's, ``{}`` without one). ``set_state`` and ``patch_state`` change it and
    stream the change to the client (``STATE_SNAPSHOT``, ``STATE_DELTA``); ``emit`` sends
    any other AG-UI event (a ``CustomEvent``, say)."""

    def __init__(self, run_input: RunAgentInput, stream: _Stream | None = None) -> None:
        self.input = run_input
        self.state: Any = copy.deepcopy(run_input.state) if run_input.state is not None else {}
        self._stream = stream

    @property
    def thread_id(self) -> str:
        return self.input.thread_id

    @property
    def run_id(self) -> str:
        return self.input.run_id

    async def set_state(self, snapshot: Any) -> None:
        self.state = copy.deepcopy(snapshot)
        await self.emit(StateSnapshotEvent(snapshot=self.state))

    async def patch_state(self, operations: Sequence[dict[str, Any]]) -> None:
        """Apply the JSON Patch ``operations`` (``add``, ``remove``, ``replace``)."""
        self.state = apply_patch(self.state, operations)
        await self.emit(StateDeltaEvent.model_validate({"delta": list(operations)}))

    async def emit(self, event: BaseEvent) -> None:
        if self._stream is not None:
            await self._stream.emit([event])


AgentFactory: TypeAlias = Callable[[AguiRun], "Agent | Awaitable[Agent]"]
"""``factory(run)`` returns (or resolves to) the ``Agent`` that answers one request: its
model, system prompt and tools. Raising ``InputError`` refuses the request (400)."""


class AGUIApp:
    """The ASGI application; ``create_app(factory)`` builds it. ``running`` maps the
    ``(thread_id, run_id)`` of each run in progress to its agent."""

    def __init__(
        self,
        agent_factory: AgentFactory,
        *,
        path: str = "/",
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_runs: int = DEFAULT_MAX_RUNS,
        body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    ) -> None:
        if not callable(agent_factory):
            raise TypeError(
                f"AGUIApp takes a function run -> Agent as agent_factory, got {agent_factory!r}"
            )
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        if max_body_bytes < 1 or max_runs < 1 or not body_timeout > 0:
            raise ValueError(
                "max_body_bytes, max_runs and body_timeout must be positive, got "
                f"{max_body_bytes!r}, {max_runs!r} and {body_timeout!r}"
            )
        self.agent_factory = agent_factory
        self.path = path
        self.cancel_path = path.rstrip("/") + "/cancel"
        self.max_body_bytes = max_body_bytes
        self.max_runs = max_runs
        self.body_timeout = body_timeout
        self.running: dict[tuple[str, str], Agent] = {}

    def cancel(self, thread_id: str, run_id: str) -> bool:
        """Abort the run ``run_id`` of ``thread_id``; ``False`` if it is not running."""
        agent = self.running.get((thread_id, run_id))
        if agent is None:
            return False
        agent.abort("cancelled by the client")
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path not in (self.path, self.cancel_path):
            await _reply(send, 404, {"error": f"Not found: the AG-UI endpoint is POST {self.path}"})
            return
        if scope["method"] != "POST":
            await _reply(send, 405, {"error": f"Method not allowed: use POST {path}"},
                         [(b"allow", b"POST")])  # fmt: skip
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        if path == self.cancel_path:
            await self._cancel(body, send)
            return
        try:
            run_input = RunAgentInput.model_validate_json(body)
        except ValidationError as exc:
            await _reply(send, 400, {"error": f"Invalid RunAgentInput: {_first_errors(exc)}"})
            return
        key = (run_input.thread_id, run_input.run_id)
        if key in self.running:
            await _reply(send, 409, {"error": f"Run {run_input.run_id!r} of thread "
                                     f"{run_input.thread_id!r} is already running"})  # fmt: skip
            return
        if len(self.running) >= self.max_runs:
            await _reply(send, 429, {"error": f"Too many runs at once (limit {self.max_runs})"},
                         [(b"retry-after", b"1")])  # fmt: skip
            return
        await self._run(run_input, receive, send)

    async def _cancel(self, body: bytes, send: Send) -> None:
        try:
            ids = msgspec.json.decode(body, type=dict[str, str])
            thread_id, run_id = ids["threadId"], ids["runId"]
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError):
            await _reply(send, 400, {"error": 'Send {"threadId": "...", "runId": "..."}'})
            return
        if self.cancel(thread_id, run_id):
            await _reply(send, 202, {"cancelled": True})
        else:
            await _reply(send, 404, {"error": f"No run {run_id!r} of thread {thread_id!r} "
                                     "is running"})  # fmt: skip

    async def _run(self, run_input: RunAgentInput, receive: Receive, send: Send) -> None:
        agent: Agent | None = None

        def client_left() -> None:
            if agent is not None:
                agent.abort("the client disconnected")

        stream = _Stream(send, client_left)
        run = AguiRun(run_input, stream)
        try:
            agent, client_tools = await self._agent(run)
        except InputError as exc:
            await _reply(send, 400, {"error": str(exc)})
            return
        translator = EventTranslator(run.thread_id, run.run_id, client_tools=client_tools)
        key = (run.thread_id, run.run_id)
        self.running[key] = agent
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(_watch_disconnect, receive, stream)
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                await stream.emit([RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id)])

                async def forward(event: Any) -> None:
                    await stream.emit(translator.translate(event))

                agent.subscribe(forward)
                if stream.gone:  # left before the run began: abort() would find no run
                    task_group.cancel_scope.cancel()
                    return
                result = await agent.continue_()  # no checkpoint before the run is active
                await stream.emit([translator.finish(result)], last=True)
                task_group.cancel_scope.cancel()
        finally:
            del self.running[key]

    async def _agent(self, run: AguiRun) -> tuple[Agent, set[str]]:
        """The factory's agent, given the thread, the client's tools and the hook that
        stops the run after a turn that called one of them; and the names of those tools
        (a tool of the agent's own wins over a client tool of the same name)."""
        made: Any = self.agent_factory(run)
        agent = await made if inspect.isawaitable(made) else made
        if not isinstance(agent, Agent):
            raise TypeError(f"the agent factory must return an Agent, got {agent!r}")
        run_input = run.input
        head = [m for m in agent.state.messages if getattr(m, "role", None) == "system"]
        thread = to_transcript(run_input.messages, run_input.context, agent.state.model)
        said = [m.role for m in thread if m.role != "system"]
        if not said or said[-1] not in ("user", "toolResult"):
            last = said[-1] if said else "nothing"
            raise InputError(
                "the thread must end with a user message or a tool message to run; it ends "
                f"with {last} (send the new user message in messages)"
            )
        agent.state.messages = [*head, *thread]
        own = {t.name for t in agent.state.tools}
        extra = [client_tool(t) for t in run_input.tools or () if t.name not in own]
        names = {t.name for t in extra}
        if extra:
            agent.state.tools = [*agent.state.tools, *extra]
            user_hook = agent.hooks.should_stop_after_turn

            async def stop_for_the_client(context: AgentTurnContext, signal: Any) -> bool:
                if any(r.tool_name in names for r in context.tool_results):
                    return True
                return bool(user_hook and await call_hook(user_hook, context, signal))

            agent.hooks = msgspec.structs.replace(
                agent.hooks, should_stop_after_turn=stop_for_the_client
            )
        return agent, names

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The request body; ``None`` after answering 408 or 413 (or when the client left)."""
        parts: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body_bytes:
                    await _reply(send, 413, {"error": "Request body too large: the limit is "
                                             f"{self.max_body_bytes} bytes"},
                                 [(b"connection", b"close")])  # fmt: skip
                    return None
                parts.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(parts)
        await _reply(send, 408, {"error": "Request body not received within "
                                 f"{self.body_timeout:g} s"}, [(b"connection", b"close")])  # fmt: skip
        return None


async def _watch_disconnect(receive: Receive, stream: _Stream) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            stream.left()
            return


def _first_errors(exc: ValidationError) -> str:
    errors = exc.errors()[:3]
    text = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(body)'}: {e['msg']}" for e in errors
    )
    more = len(exc.errors()) - len(errors)
    return text + (f" (and {more} more)" if more > 0 else "")


async def _reply(
    send: Send, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = msgspec.json.encode(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
