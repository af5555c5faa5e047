"""Steering and follow-up messages for a durable run, through DBOS workflow messages.

A message sent to a run is stored by DBOS (``send``) until the run takes it (``recv``);
taking it is recorded, so a resumed run takes the same messages at the same points and
never a message twice. The run takes everything waiting after each turn, right before the
agent looks at its queues, and hands the messages to the agent's own steering and
follow-up queues in the order they were sent; it takes what is left once more when it
ends, and reports those messages as not delivered.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio.to_thread
import msgspec
from dbos import DBOS, DBOSClient

from ..agent import Agent
from ..ai import from_json, to_json

__all__ = ["QUEUE_TOPIC", "drain_into", "envelope"]

# The DBOS message topic of a durable run's steering and follow-up messages.
QUEUE_TOPIC = "pi_trio.queue"

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
    if client is None:
        await DBOS.send_async(workflow_id, payload, QUEUE_TOPIC, idempotency_key=idempotency_key)
    else:
        await anyio.to_thread.run_sync(
            lambda: client.send(workflow_id, payload, QUEUE_TOPIC, idempotency_key=idempotency_key)
        )


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
