"""A real MCP server (the SDK's low-level ``Server``, over stdio) that lists what a
careless or hostile server would: tool names no provider accepts (line breaks, escape
codes, empty, 64 KiB), a tool named like the agent's own, a tool that runs only as a
task, a flood of tools, a result far too large, and a ``text/plain`` blob. Started as a
child process by ``tests/test_fault_mcp.py``."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {}}


def tool(name: str, **extra: Any) -> types.Tool:
    return types.Tool(
        name=name, description=f"The tool {name[:20]!r}", input_schema=OBJECT, **extra
    )


listed: list[types.Tool] = [
    tool("echo"),  # named like the agent's own tool in the tests
    tool("drop"),
    tool("flood"),
    tool("blob"),
    tool("big"),
    tool("dotted.name"),
    tool("ok-tool"),
    tool("bad\r\nname"),
    tool("esc\x1b[31mred"),
    tool(""),
    tool("x" * 65536),
    tool("9starts-with-a-digit"),
    tool("ok-tool"),  # listed twice
    tool("tasks", execution=types.ToolExecution(task_support="required")),
]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=listed)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    global listed
    name = params.name
    if name == "drop":
        listed = [t for t in listed if t.name != "echo"]
        await ctx.session.send_tool_list_changed()
        return text("dropped echo")
    if name == "flood":
        listed = [*listed, *(tool(f"many_{i}") for i in range(1500))]
        await ctx.session.send_tool_list_changed()
        return text("flooded")
    if name == "blob":
        data = base64.b64encode("plain text, ü included\n".encode()).decode()
        blob = types.BlobResourceContents(
            uri="file:///notes.txt", blob=data, mime_type="text/plain"
        )
        return types.CallToolResult(content=[types.EmbeddedResource(resource=blob)])
    if name == "big":
        return types.CallToolResult(
            content=[types.TextContent(text="y" * (3 * 1024 * 1024))]
            + [types.TextContent(text="z") for _ in range(1500)]
        )
    return text(f"server {name}")


server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
