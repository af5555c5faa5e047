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
fresh mark; each model request and each tool call reads it at the end of its step
(``last_sent``) and records it with the step's result, so a resumed run decides to take
at the same turns as the first execution. A mark the run has not taken after yet means
messages may be waiting.
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

__all__ = ["QUEUE_TOPIC", "SENT_ATTRIBUTE", "drain_into", "envelope", "last_sent", "send"]

# The DBOS message topic of a durable run's steering and follow-up messages.
QUEUE_TOPIC = "pi_trio.queue"
# The workflow attribute a sender sets after sending: a mark the run has not seen yet.
SENT_ATTRIBUTE = "pi_trio.sent"

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
