"""Steering and follow-up messages for a durable run, through DBOS workflow messages.

A message sent to a run is stored by DBOS (``send``) until the run takes it (``recv``);
taking it is recorded, so a resumed run takes the same messages at the same points and
never a message twice. The run takes what is waiting after a turn, right before the agent
looks at its queues, and hands the messages to the agent's own steering and follow-up
queues in the order they were sent; it takes what is left once more when it ends, and
reports those messages as not delivered.

Taking costs two recorded operations (DBOS's ``recv`` and the sleep of its timeout), as
much as two steps, so a run takes only after a turn whose steps saw that something was
sent. After sending, the sender sets the run's workflow attribute ``SENT_ATTRIBUTE`` to a
fresh mark; the steps that end a turn's work read it at their end (``last_sent``) and
record it with their result, so a resumed run decides to take at the same turns as the
first execution. A mark the run has not taken after yet means messages may be waiting.

Reading the mark is a query (about half of what a step costs DBOS when commits are
cheap), so only the steps after which the turn may end read it: each tool call's result
step, and a model request only when its answer calls no tool (the calls' steps read it
later in the turn). A turn whose calls all ended without a step (blocked by a hook,
invalid arguments) saw no mark; it reads the mark in a step of its own (``LOOK_STEP``),
as the run does once more when it ends.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

import anyio.to_thread
import msgspec
from dbos import DBOS, DBOSClient

from ..agent import Agent
from ..ai import from_json, to_json
from ._execution import Execution

__all__ = [
    "LOOK_STEP",
    "QUEUE_TOPIC",
    "SENT_ATTRIBUTE",
    "drain_into",
    "envelope",
    "last_sent",
    "look",
    "send",
]

# The DBOS message topic of a durable run's steering and follow-up messages.
QUEUE_TOPIC = "pi_trio.queue"
# The workflow attribute a sender sets after sending: a mark the run has not seen yet.
SENT_ATTRIBUTE = "pi_trio.sent"
# The step that only reads the mark: when a turn's steps did not, and when the run ends.
LOOK_STEP = "pi_trio.look"

Queue = Literal["steer", "followUp"]


class _Envelope(msgspec.Struct, rename="camel"):
    queue: Queue
    sent_ns: int  # the sender's clock: the order of messages taken together
    message: msgspec.Raw


def envelope(queue: Queue, message: Any) -> str:
    """The DBOS message that queues ``message`` (an agent message) on ``queue``."""
    raw = msgspec.Raw(to_json(message))
    return msgspec.json.encode(_Envelope(queue, time.time_ns(), raw)).decode()


async def send(
    workflow_id: str,
    queue: Queue,
    message: Any,
    *,
    idempotency_key: str | None,
    client: DBOSClient | None,
) -> None:
    payload = envelope(queue, message)
    # set after the message is stored: a run that sees the mark finds the message
    mark = {SENT_ATTRIBUTE: uuid.uuid4().hex}
    if client is None:
        await DBOS.send_async(workflow_id, payload, QUEUE_TOPIC, idempotency_key=idempotency_key)
        await DBOS.update_workflow_attributes_async(workflow_id, mark, merge=True)
    else:

        def send_and_mark() -> None:
            client.send(workflow_id, payload, QUEUE_TOPIC, idempotency_key=idempotency_key)
            client.update_workflow_attributes(workflow_id, mark, merge=True)

        await anyio.to_thread.run_sync(send_and_mark)


async def last_sent(workflow_id: str) -> str | None:
    """The mark the last sender left on the run (``None``: nothing was sent). Called in
    a step's body, where it is a plain read that the step's result records."""
    statuses = await DBOS.list_workflows_async(
        workflow_ids=[workflow_id], load_input=False, load_output=False
    )
    attributes = statuses[0].attributes if statuses else None
    mark = attributes.get(SENT_ATTRIBUTE) if isinstance(attributes, dict) else None
    return mark if isinstance(mark, str) else None


async def look(execution: Execution) -> None:
    """Read the mark in a step of its own, which records it: the run has looked."""

    async def read() -> str:
        return msgspec.json.encode(await last_sent(execution.workflow_id)).decode()

    execution.saw(msgspec.json.decode(await DBOS.run_step_async({"name": LOOK_STEP}, read)))


async def drain_into(agent: Agent) -> None:
    """Take every message waiting for this workflow and queue it on ``agent``."""
    taken: list[_Envelope] = []
    while True:
        raw = await DBOS.recv_async(QUEUE_TOPIC, timeout_seconds=0)
        if raw is None:
            break
        taken.append(msgspec.json.decode(raw, type=_Envelope))
    taken.sort(key=lambda e: e.sent_ns)
    for item in taken:
        message = from_json(bytes(item.message))
        if item.queue == "steer":
            agent.steer(message)
        else:
            agent.follow_up(message)
