"""Test helpers: the scripted faux provider and its response builders, recorded HTTP
responses replayed through httpx2, cassettes (traffic recorded once, then replayed), and
a loopback SSE server."""

from ._cassette import CassetteMiss as CassetteMiss
from ._cassette import RecordingTransport as RecordingTransport
from ._cassette_replay import CassetteTransport as CassetteTransport
from ._cassette_replay import cassette_registry as cassette_registry
from ._faux import FauxDeferred as FauxDeferred
from ._faux import FauxModel as FauxModel
from ._faux import FauxProvider as FauxProvider
from ._faux import FauxResponseFactory as FauxResponseFactory
from ._faux import FauxResponseStep as FauxResponseStep
from ._faux import FauxState as FauxState
from ._faux_blocks import faux_assistant_message as faux_assistant_message
from ._faux_blocks import faux_text as faux_text
from ._faux_blocks import faux_thinking as faux_thinking
from ._faux_blocks import faux_tool_call as faux_tool_call
from ._replay import RecordedRequest as RecordedRequest
from ._replay import ReplayResponse as ReplayResponse
from ._replay import ReplayTransport as ReplayTransport
from ._replay import registry_with_transport as registry_with_transport
from ._replay import split_bytes as split_bytes
from ._replay import sse_body as sse_body
from ._replay import sse_event as sse_event
from ._sse_server import ServedRequest as ServedRequest
from ._sse_server import SSEReply as SSEReply
from ._sse_server import SSEServer as SSEServer
from ._sse_server import serve_sse as serve_sse

__all__ = [
    "CassetteMiss",
    "CassetteTransport",
    "FauxDeferred",
    "FauxModel",
    "FauxProvider",
    "FauxResponseFactory",
    "FauxResponseStep",
    "FauxState",
    "RecordedRequest",
    "RecordingTransport",
    "ReplayResponse",
    "ReplayTransport",
    "SSEReply",
    "SSEServer",
    "ServedRequest",
    "cassette_registry",
    "faux_assistant_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "registry_with_transport",
    "serve_sse",
    "split_bytes",
    "sse_body",
    "sse_event",
]
