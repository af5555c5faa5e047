"""From MCP to pi_trio, without I/O: which listed tools to offer, the fields of the
``AgentTool`` that stands for each, and the ``AgentToolResult`` a ``tools/call`` result
becomes."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import msgspec
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ResourceLink,
    TextResourceContents,
    Tool,
)
from mcp_types import ImageContent as MCPImageContent
from mcp_types import TextContent as MCPTextContent

from ..agent import AgentToolResult
from ..ai import ImageContent, TextContent

__all__ = ["ToolFilter", "error_result", "to_agent_result", "tool_fingerprint"]


class ToolFilter:
    """Which of a server's tools to offer: those named in ``allow`` (all when ``None``),
    minus those named in ``deny``. Names are the server's, before any prefix."""

    __slots__ = ("allow", "deny")

    def __init__(self, allow: Collection[str] | None, deny: Collection[str] | None) -> None:
        for what, names in (("allow", allow), ("deny", deny)):
            if isinstance(names, str):
                raise TypeError(
                    f"{what}= takes a collection of tool names, not the string {names!r}; "
                    f"write {what}=[{names!r}]"
                )
        self.allow = frozenset(allow) if allow is not None else None
        self.deny = frozenset(deny or ())

    def select(self, tools: Iterable[Tool]) -> list[Tool]:
        return [
            t
            for t in tools
            if (self.allow is None or t.name in self.allow) and t.name not in self.deny
        ]


def tool_fingerprint(tool: Tool) -> bytes:
    """What the model sees of a listed tool; an unchanged fingerprint keeps the same
    ``AgentTool`` across re-listings (so the transcript declares no change)."""
    return msgspec.json.encode([tool.name, tool.title, tool.description, tool.input_schema])


def error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def to_agent_result(result: CallToolResult) -> AgentToolResult:
    """The model-facing content (text and images; other blocks described in text), the
    structured content as ``structured_content`` and ``is_error`` carried over. A result
    holding only structured content shows it to the model as JSON text."""
    content = [_block(block) for block in result.content]
    structured = result.structured_content
    if not content and structured is not None:
        content = [TextContent(text=msgspec.json.encode(structured).decode())]
    return AgentToolResult(
        content=content,
        structured_content=structured,
        is_error=True if result.is_error else None,
    )


def _block(block: ContentBlock) -> TextContent | ImageContent:
    if isinstance(block, MCPTextContent):
        return TextContent(text=block.text)
    if isinstance(block, MCPImageContent):
        return ImageContent(data=block.data, mime_type=block.mime_type)
    if isinstance(block, AudioContent):
        return TextContent(text=f"[audio: {block.mime_type}, {_base64_size(block.data)} bytes]")
    if isinstance(block, ResourceLink):
        about = f": {block.description}" if block.description else ""
        return TextContent(text=f"[resource link {block.name} <{block.uri}>{about}]")
    if isinstance(block, EmbeddedResource):
        return _resource(block.resource)
    return TextContent(text=f"[unsupported MCP content {_kind(block)}]")


def _resource(resource: TextResourceContents | BlobResourceContents) -> TextContent | ImageContent:
    if isinstance(resource, TextResourceContents):
        return TextContent(text=resource.text)
    mime = resource.mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        return ImageContent(data=resource.blob, mime_type=mime)
    return TextContent(
        text=f"[resource <{resource.uri}>: {mime}, {_base64_size(resource.blob)} bytes]"
    )


def _base64_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def _kind(block: Any) -> str:
    return repr(getattr(block, "type", type(block).__name__))
