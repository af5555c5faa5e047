"""MCP tools for agents (``pip install pi-trio[mcp]``), on the official ``mcp`` SDK.

``async with open_mcp_tools(server) as tools:`` connects to an MCP server over stdio or
streamable HTTP and offers its tools as ``AgentTool``s: the input schema as
``parameters``, text and image content for the model, structured content in
``AgentToolResult.structured_content``, ``is_error`` carried over, progress
notifications as ``on_update``. The contract:

- The MCP session lives in a task of the block that owns it; tool calls from agent runs
  are forwarded to it.
- An abort cancels the call on the server (``notifications/cancelled``); the tool result
  is ``Operation aborted`` and the session stays usable.
- A server that goes away gives the waiting and later calls an error result naming the
  server and the cause, never a hung run or an exception in the run.
- A tool-list change announced by the server changes the ``MCPTools`` sequence in place
  and the tools of attached agents (``tools.attach(agent)``) for their next run.

Importing ``pi_trio`` (or ``pi_trio.ai``, ``pi_trio.agent``) never imports ``mcp``; only
this module does.
"""

try:
    import mcp as _mcp  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "pi_trio.mcp connects to MCP servers with the MCP SDK, which is not installed: "
        "pip install 'pi-trio[mcp]'"
    ) from exc

from mcp.client.stdio import StdioServerParameters as StdioServerParameters

from ._session import MCPConnectionError as MCPConnectionError
from ._tools import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from ._tools import MCPToolConflictError as MCPToolConflictError
from ._tools import MCPTools as MCPTools
from ._tools import open_mcp_tools as open_mcp_tools

__all__ = [
    "CONNECT_TIMEOUT",
    "MCPConnectionError",
    "MCPToolConflictError",
    "MCPTools",
    "StdioServerParameters",
    "open_mcp_tools",
]
