"""From MCP to pi_trio, without I/O: which listed tools to offer (under which names,
within which limits), the fields of the ``AgentTool`` that stands for each, and the
``AgentToolResult`` a ``tools/call`` result becomes.

A server is not trusted to keep to what providers accept. A tool is offered only when its
name (after the ``prefix``, with MCP's ``.`` and ``/`` written ``_``) is one every provider
takes: a letter or ``_``, then letters, digits, ``_`` and ``-``, at most
`MAX_TOOL_NAME_CHARS` in all; not a second tool of one name; its declaration (name,
description and schema as JSON) within `MAX_DECLARATION_BYTES`; not one that can only run
as a task (``execution.taskSupport: "required"``: this client does not run the task
flow); and among the first `MAX_LISTED_TOOLS`. Every other tool is left out, with a
warning on the ``pi_trio.mcp`` logger naming it. A result's text is cut at
`MAX_RESULT_TEXT_CHARS` and its blocks at `MAX_RESULT_BLOCKS`, saying so.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Collection, Iterable
from typing import Any, Final

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

__all__ = [
    "MAX_DECLARATION_BYTES",
    "MAX_LISTED_TOOLS",
    "MAX_RESULT_BLOCKS",
    "MAX_RESULT_TEXT_CHARS",
    "MAX_TOOL_NAME_CHARS",
    "OfferedTool",
    "ToolFilter",
    "error_result",
    "offered_tools",
    "to_agent_result",
    "tool_fingerprint",
]

_logger = logging.getLogger("pi_trio.mcp")

MAX_TOOL_NAME_CHARS: Final = 64
"""The longest tool name every provider takes (OpenAI, Anthropic, Gemini, Bedrock)."""
MAX_LISTED_TOOLS: Final = 1_000
"""Tools offered from one server: far more than a model can choose from; a listing of
100 000 took 24 s and 700 MiB."""
MAX_DECLARATION_BYTES: Final = 256 * 1024
"""One tool's name, description and input schema as JSON: the model reads it on every
request."""
MAX_RESULT_TEXT_CHARS: Final = 1024 * 1024
"""Characters of text one tool result hands the model; the rest is cut, saying so."""
MAX_RESULT_BLOCKS: Final = 1_000
"""Content blocks of one tool result; the rest are left out, saying so."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Text-like blobs whose bytes are handed to the model as text.
_TEXT_TYPES: Final = re.compile(r"text/.*|application/(json|xml|yaml|x-yaml|toml|csv)(;.*)?")


class OfferedTool(msgspec.Struct, frozen=True):
    """A listed tool the model may see, under ``name`` (the server knows it as
    ``spec.name``)."""

    name: str
    spec: Any


def _shown(name: str) -> str:
    return repr(name if len(name) <= 80 else name[:80] + "...")


def offered_tools(
    server: str, listed: Iterable[Tool], prefix: str, tool_filter: ToolFilter
) -> list[OfferedTool]:
    """The tools of ``listed`` to offer (see the module docstring), in the server's order."""
    offered: list[OfferedTool] = []
    names: set[str] = set()

    def skip(spec: Tool, why: str) -> None:
        _logger.warning(
            "MCP server %r lists the tool %s, which is not offered: %s",
            server,
            _shown(spec.name),
            why,
        )

    for spec in tool_filter.select(listed):
        name = prefix + spec.name.replace(".", "_").replace("/", "_")
        if len(offered) >= MAX_LISTED_TOOLS:
            skip(spec, f"the server lists more than {MAX_LISTED_TOOLS} tools (MAX_LISTED_TOOLS)")
            continue
        if not spec.name or not _NAME.fullmatch(name) or len(name) > MAX_TOOL_NAME_CHARS:
            skip(
                spec,
                f"no provider takes the name {_shown(name)} (a letter or _, then letters, "
                f"digits, _ and -, at most {MAX_TOOL_NAME_CHARS} characters)",
            )
            continue
        if name in names:
            skip(spec, f"another of its tools is offered as {name!r} already")
            continue
        execution = spec.execution
        if execution is not None and execution.task_support == "required":
            skip(spec, "it runs only as a task (taskSupport: required), which pi_trio does not")
            continue
        size = len(tool_fingerprint(spec))
        if size > MAX_DECLARATION_BYTES:
            skip(
                spec,
                f"its declaration takes {size} bytes, more than {MAX_DECLARATION_BYTES} "
                "(MAX_DECLARATION_BYTES)",
            )
            continue
        names.add(name)
        offered.append(OfferedTool(name, spec))
    return offered


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
    holding only structured content shows it to the model as JSON text. Text past
    `MAX_RESULT_TEXT_CHARS` and blocks past `MAX_RESULT_BLOCKS` are cut, saying so."""
    content = [_block(block) for block in result.content[:MAX_RESULT_BLOCKS]]
    structured = result.structured_content
    if not content and structured is not None:
        content = [TextContent(text=msgspec.json.encode(structured).decode())]
    content = _bounded(content)
    if len(result.content) > MAX_RESULT_BLOCKS:
        left = len(result.content) - MAX_RESULT_BLOCKS
        content.append(
            TextContent(text=f"[{left} more content blocks left out: MAX_RESULT_BLOCKS]")
        )
    return AgentToolResult(
        content=content,
        structured_content=structured,
        is_error=True if result.is_error else None,
    )


def _bounded(content: list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
    """``content`` with its text cut at ``MAX_RESULT_TEXT_CHARS`` in all."""
    left = MAX_RESULT_TEXT_CHARS
    bounded: list[TextContent | ImageContent] = []
    for block in content:
        if isinstance(block, TextContent):
            if len(block.text) > left:
                cut = len(block.text) - left
                note = f"\n[{cut} more characters cut: MAX_RESULT_TEXT_CHARS]"
                bounded.append(TextContent(text=block.text[:left] + note))
                left = 0
                continue
            left -= len(block.text)
        bounded.append(block)
    return bounded


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
    if _TEXT_TYPES.fullmatch(mime.lower()):
        try:
            return TextContent(text=base64.b64decode(resource.blob).decode("utf-8"))
        except (binascii.Error, ValueError):  # not base64, or not UTF-8: described below
            pass
    return TextContent(
        text=f"[resource <{resource.uri}>: {mime}, {_base64_size(resource.blob)} bytes]"
    )


def _base64_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def _kind(block: Any) -> str:
    return repr(getattr(block, "type", type(block).__name__))
