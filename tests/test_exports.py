"""The public surface: every exported name exists, and nothing public leaks unlisted."""

from __future__ import annotations

import importlib

import pytest

PUBLIC_MODULES = [
    "pi_trio.ai",
    "pi_trio.agent",
    "pi_trio.agent.compaction",
    "pi_trio.proxy",
    "pi_trio.testing",
    "pi_trio.mcp",
    "pi_trio.session",
    "pi_trio.otel",
    "pi_trio.durable",
    "pi_trio.temporal",
    "pi_trio.fanout",
    "pi_trio.agui",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_name_in_all_is_importable(name: str) -> None:
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []
    assert len(module.__all__) == len(set(module.__all__))


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_attribute_is_listed_in_all(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        n
        for n, value in vars(module).items()
        if not n.startswith("_")
        and getattr(value, "__module__", name).startswith("pi_trio")
        and not isinstance(value, type(module))
    }
    assert public - set(module.__all__) == set()


def test_the_design_names_are_public() -> None:
    ai = importlib.import_module("pi_trio.ai")
    agent = importlib.import_module("pi_trio.agent")
    testing = importlib.import_module("pi_trio.testing")
    for n in [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "SystemMessage",
        "TextContent",
        "ThinkingContent",
        "ImageContent",
        "ToolCall",
        "Usage",
        "Model",
        "Context",
        "Tool",
        "open_stream",
        "open_stream_simple",
        "complete",
        "complete_simple",
        "register_api_provider",
        "get_api_provider",
        "unregister_api_provider",
        "get_model",
        "get_models",
        "get_providers",
        "calculate_cost",
        "validate_tool_arguments",
        "validate_tool_arguments_async",
        "parse_streaming_json",
        "to_json",
        "from_json",
    ]:
        assert hasattr(ai, n), n
    for n in [
        "Agent",
        "AgentTool",
        "AgentToolResult",
        "AbortController",
        "AbortSignal",
        "BeforeToolCallResult",
        "AfterToolCallResult",
        "agent_loop",
        "agent_loop_continue",
        "run_agent_loop",
        "run_agent_loop_continue",
        "stream_proxy",
        "tool",
        "AgentStartEvent",
        "AgentEndEvent",
        "TurnStartEvent",
        "TurnEndEvent",
        "MessageStartEvent",
        "MessageUpdateEvent",
        "MessageEndEvent",
        "ToolExecutionStartEvent",
        "ToolExecutionUpdateEvent",
        "ToolExecutionEndEvent",
    ]:
        assert hasattr(agent, n), n
    for n in [
        "FauxProvider",
        "faux_text",
        "faux_thinking",
        "faux_tool_call",
        "faux_assistant_message",
    ]:
        assert hasattr(testing, n), n


def test_the_catalog_look_up_by_name_is_public() -> None:
    ai = importlib.import_module("pi_trio.ai")
    for n in [
        "resolve_model",
        "UnknownModelError",
        "ModelPromptCache",
        "ModelInputLimits",
        "ModelImageInputLimits",
        "ModelImageResizeOptions",
    ]:
        assert n in ai.__all__, n
    assert issubclass(ai.UnknownModelError, LookupError)
    assert issubclass(ai.UnknownModelError, ai.PiError)


def test_importing_pi_trio_imports_no_optional_sdk() -> None:
    """Optional extras load on first use: importing pi_trio (and the Bedrock and Vertex
    provider modules) pulls in neither DBOS, Temporal, Ray, botocore, google-auth nor the ecma
    extra's regress and ada_url."""
    import subprocess
    import sys

    code = (
        "import sys, pi_trio, pi_trio.ai, pi_trio.agent, pi_trio.testing, pi_trio.cli\n"
        "import pi_trio.ai.providers.bedrock, pi_trio.ai.providers.vertex\n"
        "optional = ('dbos', 'temporalio', 'ray', 'botocore', 'google.auth', 'regress', 'ada_url')\n"
        "print(sorted(m for m in optional if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_jsonschema_is_imported_on_the_first_validation_not_with_pi_trio() -> None:
    """jsonschema and its dependencies take tens of milliseconds to import; a program pays
    that when it first validates tool arguments, not when it imports pi_trio."""
    import subprocess
    import sys

    code = (
        "import sys, pi_trio, pi_trio.ai, pi_trio.agent, pi_trio.cli\n"
        "heavy = ('jsonschema', 'referencing')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "tool = pi_trio.ai.Tool(name='t', description='', parameters={'type': 'object'})\n"
        "pi_trio.ai.validate_tool_arguments(tool, {})\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "['jsonschema',", "'referencing']"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_class_and_function_has_its_own_docstring(name: str) -> None:
    """``help()`` on a public name shows what it is, not an inherited or empty text."""
    import inspect

    module = importlib.import_module(name)
    bare = []
    for n in module.__all__:
        value = getattr(module, n)
        if not getattr(value, "__module__", "").startswith("pi_trio"):
            continue  # re-exported from a dependency (the MCP SDK)
        if inspect.isclass(value):
            if not (value.__dict__.get("__doc__") or "").strip():
                bare.append(n)
        elif inspect.isfunction(value) and not (value.__doc__ or "").strip():
            bare.append(n)
    assert bare == []


def test_help_on_the_faux_response_step_describes_it() -> None:
    import pydoc

    from pi_trio.testing import FauxResponseStep

    text = pydoc.render_doc(FauxResponseStep, renderer=pydoc.plaintext)
    assert "One scripted response of a ``FauxProvider``" in text
    assert "class str" not in text
