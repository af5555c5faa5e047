"""Deferred (background) responses as pi 1.6 has them: the ``deferred`` option, the
``"deferred"`` stop reason, ``DeferredHandle`` JSON that either runtime can fetch, one look
(``fetch_deferred``), polling that honours ``pollAfterMs`` (``poll_deferred``), cancelling,
and abort and cancellation while polling.

tests/fixtures/pi1x was recorded from pi-ai 1.6.0 (tests/record_pi1x_pi16.mjs): its faux
provider's deferred answers, and handles crossing between the runtimes through a provider
with a background mode (``deferred_across.json``: what pi 1.6 gave its fetch for a handle
pi_trio wrote in ``pi_trio_deferred.json``, and a handle pi 1.6 wrote)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import trio

from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    Context,
    DoneEvent,
    Model,
    PiError,
    StreamOptions,
    TextContent,
    Usage,
    UserMessage,
    complete_simple,
    from_json,
    to_json,
)
from pi_trio.ai.deferred import (
    DeferredFetchOptions,
    DeferredHandle,
    DeferredOptions,
    cancel_deferred,
    fetch_deferred,
    open_deferred_stream,
    poll_deferred,
)
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import ApiProvider, ProviderRegistry
from pi_trio.testing import FauxProvider, faux_assistant_message

FIXTURES = Path(__file__).parent / "fixtures" / "pi1x"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def context() -> Context:
    return Context(messages=[UserMessage(content="Summarize the report.")])


def wire(value: Any) -> Any:
    return json.loads(to_json(value))


def faux_registry(**settings: Any) -> tuple[FauxProvider, ProviderRegistry, Model]:
    faux = FauxProvider(api="faux", **settings)
    registry = ProviderRegistry(builtins=False)
    faux.register(registry)
    model = faux.get_model()
    assert model is not None
    return faux, registry, model


# --------------------------------------------------------------------------- the faux provider


async def test_the_faux_provider_answers_a_deferred_request_as_pi16_does() -> None:
    recorded = fixture("deferred_faux")
    faux, registry, model = faux_registry(deferred={"pendingFetches": 1, "pollAfterMs": 250})
    faux.set_responses(
        [faux_assistant_message("The deferred answer."), faux_assistant_message("Never fetched.")]
    )
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    handle = submitted.deferred
    pending = await fetch_deferred(handle, model=model, registry=registry)
    final = await fetch_deferred(handle, model=model, registry=registry)
    again = await fetch_deferred(handle, model=model, registry=registry)
    second = await complete_simple(
        model, context(), registry=registry, deferred=DeferredOptions(window="1h")
    )
    assert second.deferred is not None
    await cancel_deferred(second.deferred, model=model, registry=registry)
    after_cancel = await fetch_deferred(second.deferred, model=model, registry=registry)
    unknown = await fetch_deferred(
        msgspec.structs.replace(second.deferred, id="deferred:unknown"),
        model=model,
        registry=registry,
    )
    ids = {handle.id: "ID1", second.deferred.id: "ID2"}
    recorded_ids = {
        recorded["submitted"]["deferred"]["id"]: "ID1",
        recorded["second"]["deferred"]["id"]: "ID2",
    }

    def comparable(message: Any, names: dict[str, str]) -> Any:
        """A message without its clock readings, handle ids named by their order."""
        text = json.dumps(message)
        for real, name in names.items():
            text = text.replace(real, name)
        shown = json.loads(text)
        shown.pop("timestamp", None)
        shown.pop("durationMs", None)
        return shown

    for name, ours in [
        ("submitted", submitted),
        ("pending", pending),
        ("final", final),
        ("again", again),
        ("second", second),
        ("afterCancel", after_cancel),
        ("unknown", unknown),
    ]:
        assert comparable(wire(ours), ids) == comparable(recorded[name], recorded_ids), name
    assert handle.id.startswith("deferred:")
    state = faux.state
    assert recorded["state"] == {
        "callCount": state.call_count,
        "deferredFetchCount": state.deferred_fetch_count,
        "cancelledDeferred": [
            comparable(wire(h), ids) | {"id": recorded["second"]["deferred"]["id"]}
            for h in state.cancelled_deferred
        ],
    }


async def test_a_deferred_answer_is_made_when_a_look_finds_it_ready() -> None:
    """The factory runs at the look that finds the response ready, once, with the
    submission's context and options (without ``deferred``)."""
    seen: list[tuple[Any, Any]] = []

    def factory(ctx: Context, options: StreamOptions, state: Any, model: Model) -> AssistantMessage:
        seen.append((ctx, options.deferred))
        return faux_assistant_message(f"made at look {state.deferred_fetch_count}")

    faux, registry, model = faux_registry(deferred={"pending_fetches": 2})
    faux.set_responses([factory])
    sent = context()
    submitted = await complete_simple(model, sent, registry=registry, deferred=True)
    assert submitted.deferred is not None
    assert seen == []
    answers = [
        await fetch_deferred(submitted.deferred, model=model, registry=registry) for _ in range(4)
    ]
    assert [a.stop_reason for a in answers] == ["deferred", "deferred", "stop", "stop"]
    assert [a.content for a in answers[2:]] == [[TextContent(text="made at look 3")]] * 2
    assert len(seen) == 1
    assert seen[0][0].messages == sent.messages
    assert seen[0][1] is None


async def test_a_request_without_deferred_is_answered_at_once() -> None:
    faux, registry, model = faux_registry(deferred={"pending_fetches": 3})
    faux.set_responses([faux_assistant_message("now")])
    message = await complete_simple(model, context(), registry=registry)
    assert (message.stop_reason, message.deferred) == ("stop", None)


async def test_the_deferred_submission_streams_a_done_event_of_reason_deferred() -> None:
    faux, registry, model = faux_registry()
    faux.set_responses([faux_assistant_message("later")])
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    async with open_deferred_stream(submitted.deferred, model=model, registry=registry) as events:
        kinds = [event.type async for event in events]
    assert kinds[0] == "start"
    assert kinds[-1] == "done"
    assert events.result().content == [TextContent(text="later")]


# --------------------------------------------------------------------------- polling


async def test_polling_waits_poll_after_ms_before_each_look(autojump_clock: Any) -> None:
    faux, registry, model = faux_registry(deferred={"pending_fetches": 2, "poll_after_ms": 750})
    faux.set_responses([faux_assistant_message("polled")])
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    looks: list[float] = []

    def on_response(info: Any, model: Model) -> None:
        looks.append(trio.current_time())

    start = trio.current_time()
    final = await poll_deferred(
        submitted.deferred, model=model, registry=registry, on_response=on_response
    )
    assert final.content == [TextContent(text="polled")]
    assert [round(t - start, 3) for t in looks] == [0.75, 1.5, 2.25]
    assert faux.state.deferred_fetch_count == 3


async def test_polling_follows_the_newest_handle_and_the_interval_when_it_names_none(
    autojump_clock: Any,
) -> None:
    """A look may hand back another handle (a new id, a new wait); the next look uses it.
    Without ``pollAfterMs`` the wait is ``interval_ms``."""
    looked: list[tuple[str, float]] = []
    start = trio.current_time()

    async def fetch(model: Model, handle: DeferredHandle, options: Any, send: Any) -> None:
        looked.append((handle.id, round(trio.current_time() - start, 3)))
        step = int(handle.id.split(":")[1])
        if step < 2:
            nxt = DeferredHandle(
                provider="p",
                model_id="m",
                api="bg",
                id=f"job:{step + 1}",
                poll_after_ms=None if step == 0 else 40,
            )
            await send.send(DoneEvent(reason="deferred", message=message("deferred", nxt)))
        else:
            await send.send(DoneEvent(reason="stop", message=message("stop")))

    registry, model = background_registry(fetch)
    first = DeferredHandle(provider="p", model_id="m", api="bg", id="job:0", poll_after_ms=5)
    final = await poll_deferred(first, model=model, registry=registry, interval_ms=300)
    assert final.stop_reason == "stop"
    assert looked == [("job:0", 0.005), ("job:1", 0.305), ("job:2", 0.345)]


@pytest.mark.parametrize("when", ["waiting", "looking"])
async def test_an_abort_during_a_poll_ends_it_at_once_keeping_the_handle(
    autojump_clock: Any, when: str
) -> None:
    controller = AbortController()
    looks = 0

    async def fetch(model: Model, handle: DeferredHandle, options: Any, send: Any) -> None:
        nonlocal looks
        looks += 1
        if when == "looking":
            await anyio.sleep(3600)  # a long poll the abort must cut short
        await send.send(DoneEvent(reason="deferred", message=message("deferred", handle)))

    registry, model = background_registry(fetch)
    handle = DeferredHandle(provider="p", model_id="m", api="bg", id="job:1", poll_after_ms=1000)
    result: list[AssistantMessage] = []

    async def poll() -> None:
        result.append(
            await poll_deferred(handle, model=model, registry=registry, signal=controller.signal)
        )

    start = trio.current_time()
    async with anyio.create_task_group() as tg:
        tg.start_soon(poll)
        await anyio.sleep(1.5 if when == "waiting" else 1.1)
        controller.abort()
    (aborted,) = result
    assert (aborted.stop_reason, aborted.error_message) == ("aborted", "Request was aborted")
    assert aborted.deferred == handle
    assert round(trio.current_time() - start, 3) == (1.5 if when == "waiting" else 1.1)
    assert looks == 1


async def test_the_callers_cancellation_propagates_out_of_a_poll(autojump_clock: Any) -> None:
    faux, registry, model = faux_registry(deferred={"pending_fetches": 100, "poll_after_ms": 1000})
    faux.set_responses([faux_assistant_message("never")])
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    with anyio.move_on_after(2.5) as scope:
        await poll_deferred(submitted.deferred, model=model, registry=registry)
    assert scope.cancelled_caught
    assert faux.state.deferred_fetch_count == 2


async def test_polling_a_cancelled_response_ends_with_its_error() -> None:
    faux, registry, model = faux_registry(deferred={"pending_fetches": 1, "poll_after_ms": 0})
    faux.set_responses([faux_assistant_message("never")])
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    await cancel_deferred(submitted.deferred, model=model, registry=registry)
    failed = await poll_deferred(submitted.deferred, model=model, registry=registry)
    assert failed.stop_reason == "error"
    assert failed.error_message == f"Faux deferred response was cancelled: {submitted.deferred.id}"
    assert faux.state.cancelled_deferred == [submitted.deferred]


def test_polling_works_on_asyncio() -> None:
    async def main() -> AssistantMessage:
        faux, registry, model = faux_registry(deferred={"pending_fetches": 2, "poll_after_ms": 1})
        faux.set_responses([faux_assistant_message("on asyncio")])
        submitted = await complete_simple(model, context(), registry=registry, deferred=True)
        assert submitted.deferred is not None
        return await poll_deferred(submitted.deferred, model=model, registry=registry)

    final = anyio.run(main, backend="asyncio")
    assert final.content == [TextContent(text="on asyncio")]


def test_an_abort_while_waiting_works_on_asyncio() -> None:
    async def main() -> AssistantMessage:
        faux, registry, model = faux_registry(
            deferred={"pending_fetches": 5, "poll_after_ms": 60_000}
        )
        faux.set_responses([faux_assistant_message("never")])
        submitted = await complete_simple(model, context(), registry=registry, deferred=True)
        assert submitted.deferred is not None
        controller = AbortController()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: anyio.sleep(0.01))
                result: list[AssistantMessage] = []

                async def poll() -> None:
                    result.append(
                        await poll_deferred(
                            submitted.deferred,  # type: ignore[arg-type]
                            model=model,
                            registry=registry,
                            signal=controller.signal,
                        )
                    )

                tg.start_soon(poll)
                await anyio.sleep(0.05)
                controller.abort()
        return result[0]

    assert anyio.run(main, backend="asyncio").stop_reason == "aborted"


# --------------------------------------------------------------------------- misuse


async def test_an_api_without_a_background_mode_refuses_a_handle() -> None:
    registry = ProviderRegistry(builtins=False)

    async def stream(*args: Any) -> None:
        raise AssertionError("not called")

    registry.register(ApiProvider(api="plain", stream=stream, stream_simple=stream))
    model = plain_model("plain")
    handle = DeferredHandle(provider="p", model_id="m", api="plain", id="x")
    with pytest.raises(PiError, match=r"api 'plain' has no background mode \(fetch_deferred"):
        await fetch_deferred(handle, model=model, registry=registry)
    with pytest.raises(PiError, match=r"api 'plain' has no background mode \(cancel_deferred"):
        await cancel_deferred(handle, model=model, registry=registry)


async def test_a_handle_of_another_api_or_an_unknown_model_is_refused() -> None:
    handle = DeferredHandle(provider="p", model_id="m", api="bg", id="x")
    with pytest.raises(PiError, match=r"belongs to api 'bg', but the model 'm' uses api 'other'"):
        await fetch_deferred(handle, model=plain_model("other"))
    with pytest.raises(PiError, match=r"names model 'm' of provider 'p', which the catalog"):
        await fetch_deferred(handle)
    with pytest.raises(TypeError, match=r"expected a DeferredHandle"):
        await fetch_deferred({"id": "x"})  # type: ignore[arg-type]


async def test_a_catalog_model_is_found_from_the_handle_alone() -> None:
    """``fetch_deferred(handle)``: the handle names provider and model; the catalog has it,
    and the registry's API for it does the look."""
    seen: list[Model] = []

    async def fetch(model: Model, handle: DeferredHandle, options: Any, send: Any) -> None:
        seen.append(model)
        await send.send(DoneEvent(reason="stop", message=message("stop")))

    async def stream(*args: Any) -> None:
        raise AssertionError("not called")

    registry = ProviderRegistry(builtins=False)
    registry.register(
        ApiProvider(
            api="anthropic-messages", stream=stream, stream_simple=stream, fetch_deferred=fetch
        )
    )
    handle = DeferredHandle(
        provider="anthropic", model_id="claude-sonnet-4-5", api="anthropic-messages", id="b"
    )
    await fetch_deferred(handle, registry=registry)
    assert [(m.provider, m.id) for m in seen] == [("anthropic", "claude-sonnet-4-5")]


# --------------------------------------------------------------------------- handles across runtimes


def test_a_handle_written_by_pi16_round_trips_byte_for_byte() -> None:
    recorded = fixture("deferred_across")
    text = recorded["submittedJson"]
    message = from_json(text, AssistantMessage, exact=True)
    assert to_json(message).decode() == text
    plain = from_json(text, AssistantMessage)
    assert json.loads(to_json(plain)) == json.loads(text)  # same JSON values, pi_trio's order
    assert plain.deferred is not None
    assert plain.deferred.data["customId"] == "row-7"


async def test_a_handle_written_by_pi16_is_fetched_by_pi_trio_unchanged() -> None:
    recorded = fixture("deferred_across")
    text = recorded["submittedJson"]
    submitted = from_json(text, AssistantMessage, exact=True)
    assert submitted.deferred is not None
    received: list[bytes] = []

    async def fetch(model: Model, handle: DeferredHandle, options: Any, send: Any) -> None:
        received.append(to_json(handle))
        await send.send(DoneEvent(reason="stop", message=message("stop")))

    registry, model = background_registry(fetch, api="pi1x-background", provider="pi1x")
    await fetch_deferred(submitted.deferred, model=model, registry=registry)
    # exactly what pi 1.6's own fetch was given for the same handle
    assert received == [recorded["received"][0]["handle"].encode()]


def test_a_handle_written_by_pi_trio_reaches_pi16_unchanged() -> None:
    """pi_trio still writes the committed message byte for byte, and pi 1.6's fetch and
    cancel were given the same handle (same JSON values; JavaScript spells 2.5e20 its
    own way, and pi_trio reading pi 1.6's text with ``exact=True`` writes it back as is)."""
    recorded = fixture("deferred_across")
    ours = (FIXTURES / "pi_trio_deferred.json").read_bytes().strip()
    handle = DeferredHandle(
        provider="pi1x",
        model_id="batch-model",
        api="pi1x-background",
        id="resp_pi_trio:42",
        expires_at=1767398400000,
        poll_after_ms=2000,
        data={
            "written_by": "pi_trio",
            "floats": [0.1, 1e-07, 2.5e20],
            "text": "ü\u2028",
            "empty": {},
        },
    )
    built = AssistantMessage(
        content=[],
        api="pi1x-background",
        provider="pi1x",
        model="batch-model",
        usage=Usage(),
        stop_reason="deferred",
        deferred=handle,
        timestamp=1767225600999,
    )
    assert to_json(built) == ours
    assert recorded["fromPiTrio"].encode() == ours
    ops = [(r["op"], json.loads(r["handle"])) for r in recorded["received"][1:]]
    assert ops == [("fetch", wire(handle)), ("cancel", wire(handle))]
    for r in recorded["received"][1:]:
        assert to_json(from_json(r["handle"], DeferredHandle, exact=True)) == r["handle"].encode()
    assert recorded["fetched"]["content"] == [{"type": "text", "text": "fetched resp_pi_trio:42"}]


def test_fetch_options_carry_the_request_options_and_a_long_poll() -> None:
    options = DeferredFetchOptions(wait_ms=20_000, api_key="sk-secret", max_retries=2)
    assert repr(options) == "DeferredFetchOptions(api_key=<hidden>, max_retries=2, wait_ms=20000)"


# --------------------------------------------------------------------------- helpers


def plain_model(api: str, provider: str = "p", model_id: str = "m") -> Model:
    return Model(
        id=model_id,
        name=model_id,
        api=api,
        provider=provider,
        base_url="http://localhost:0",
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=1000,
        max_tokens=100,
    )


def message(stop_reason: Any, handle: DeferredHandle | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=[] if stop_reason == "deferred" else [TextContent(text="ready")],
        api="bg",
        provider="p",
        model="m",
        usage=Usage(),
        stop_reason=stop_reason,
        deferred=handle,
        timestamp=1,
    )


def background_registry(
    fetch: Callable[..., Any], *, api: str = "bg", provider: str = "p"
) -> tuple[ProviderRegistry, Model]:
    async def stream(*args: Any) -> None:
        raise AssertionError("not called")

    registry = ProviderRegistry(builtins=False)
    registry.register(
        ApiProvider(api=api, stream=stream, stream_simple=stream, fetch_deferred=fetch)
    )
    model_id = "batch-model" if api == "pi1x-background" else "m"
    return registry, plain_model(api, provider, model_id)
