"""A real MCP server, written with the SDK, that the MCP tests start as a child process.

``python tests/mcp_server.py`` serves over stdio; ``python tests/mcp_server.py http``
serves streamable HTTP on a free loopback port and prints its URL as the first line.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import TypedDict

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextResourceContents,
)

server = MCPServer("fixture", log_level="CRITICAL")
block_cancelled = anyio.Event()

# A transparent PNG of one pixel.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


class Sum(TypedDict):
    total: int


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return {"total": a + b}


@server.tool(title="Echo")
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with the reason given."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def pixel() -> Image:
    """A tiny picture."""
    return Image(data=PIXEL, format="png")


@server.tool()
def kinds() -> CallToolResult:
    """One content block of each other kind."""
    return CallToolResult(
        content=[
            AudioContent(data="AAAA", mime_type="audio/wav"),
            ResourceLink(name="notes", uri="file:///notes.txt", description="the notes"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="inline")),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="file:///b.bin", blob="AAAAAA==", mime_type="application/zip"
                )
            ),
        ]
    )


@server.tool()
def only_structured() -> CallToolResult:
    """Structured content without any content block."""
    return CallToolResult(content=[], structured_content={"n": 1})


@server.tool()
def secret() -> str:
    """Not for agents."""
    return "leaked"


@server.tool()
async def block(ctx: Context) -> str:
    """Report progress once, then wait until cancelled."""
    await ctx.report_progress(0, 1, "waiting")
    try:
        await anyio.sleep_forever()
    finally:
        block_cancelled.set()
    return "unreachable"


@server.tool()
async def was_block_cancelled() -> str:
    """Whether a call to block was cancelled by the client (waits up to 10 s for it)."""
    with anyio.move_on_after(10):
        await block_cancelled.wait()
    return "cancelled" if block_cancelled.is_set() else "still running"


@server.tool()
def die() -> str:
    """The server process exits in the middle of this call."""
    os._exit(3)


def double(x: int) -> int:
    """Double a number."""
    return 2 * x


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool double, remove echo and announce the change."""
    server.add_tool(double)
    server.remove_tool("echo")
    await ctx.notify_tools_changed()  # 2026-era: subscriptions/listen streams
    if not ctx.protocol_version or ctx.protocol_version < "2026":
        await ctx.session.send_tool_list_changed()  # 2025-era: a notification
    return "grown"


def serve_http() -> None:
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="critical")
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        server.run("stdio")
