"""The public surface: every exported name exists, nothing public leaks unlisted, each
name has one home in its tier, and a name that left a top level says where it went."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each tier and its names, one home per name. pi_trio.ai and pi_trio.agent keep what a
# program writes every day; a name moved between tiers is a change of this table (and of
# the README's "Where the names moved" list).
TIERS = {
    "pi_trio": "Agent tool",
    "pi_trio.ai": """
        AbortController AbortSignal AssistantMessage AssistantMessageEvent
        AssistantMessageStream Context Cost DoneEvent ErrorEvent ImageContent Message
        MessageDecodeError MessageValidationError Model OutputFormat PiError ProviderError
        ProviderNotFoundError RetryPolicy StartEvent StopReason StreamOptions
        StreamProtocolError SystemMessage TextContent TextDeltaEvent TextEndEvent TextStartEvent
        ThinkingBudgets ThinkingContent ThinkingDeltaEvent ThinkingEndEvent ThinkingLevel
        ThinkingStartEvent Tool ToolArgumentsError ToolCall ToolCallDeltaEvent ToolCallEndEvent
        ToolCallStartEvent ToolResultMessage UnknownModelError Usage UserMessage calculate_cost
        complete complete_simple from_json get_api_provider get_model get_models get_providers
        messages_from_json messages_to_json open_stream open_stream_simple parse_streaming_json
        register_api_provider resolve_model to_json unregister_api_provider
        validate_tool_arguments validate_tool_arguments_async validate_tool_call
    """,
    "pi_trio.ai.transcript": """
        NestedToolCallRecord NestedToolCalls ResolvedTranscriptTools ToolRef ToolStateChanges
        collapse_system_messages create_initial_system_message declarations_equal
        declare_tool_changes get_added_tool_names get_current_system_message
        get_current_system_prompt get_current_tools get_declared_tools
        get_initial_system_message get_system_message_text get_tool_state_changes
        has_non_additive_tool_changes has_tool_redefinitions normalize_context
        render_system_message_update resolve_transcript resolve_transcript_tools
        to_tool_declaration transform_messages without_initial_system_message
    """,
    "pi_trio.ai.json": """
        MAX_JSON_DEPTH StreamingJsonParser ToolCallArguments extra_fields messages_from_jsonl
        messages_to_jsonl parse_tool_call_arguments repair_json sanitize_surrogates
    """,
    "pi_trio.ai.models": """
        CostTier ModelCost ModelImageInputLimits ModelImageResizeOptions ModelInputLimits
        ModelPromptCache ModelThinkingLevel clamp_thinking_level get_supported_thinking_levels
        models_are_equal supports_json_schema_output
    """,
    "pi_trio.ai.failures": """
        DEFAULT_MAX_AGENT_RETRY_DELAY_MS FailureKind failure_kind get_overflow_patterns
        is_context_overflow is_recoverable_length is_retryable_assistant_error
        retry_assistant_call retry_delay_ms
    """,
    "pi_trio.ai.providers": """
        ApiProvider ClientAttribution ClientIdentity CustomUserAgent MessageBuilder MessageFold
        PI_TRIO_ATTRIBUTION ProviderRegistry ResponseInfo StreamFn cleanup_session_resources
        default_registry env_api_key_names find_env_keys get_api_providers get_env_api_key
        merge_client_identity now_ms replay_events unregister_api_providers
    """,
    "pi_trio.ai.deferred": """
        DEFAULT_POLL_INTERVAL_MS DeferredCancelFn DeferredFetchFn DeferredFetchOptions
        DeferredHandle DeferredOptions DeferredWindow cancel_deferred fetch_deferred
        open_deferred_stream poll_deferred
    """,
    "pi_trio.agent": """
        AbortController AbortSignal Agent AgentBusyError AgentContext AgentEndEvent AgentEvent
        AgentHooks AgentLoopConfig AgentMessage AgentStartEvent AgentState AgentTool
        AgentToolResult ApprovalDecision ApprovalPendingError AutoRetryEndEvent
        AutoRetryStartEvent Compaction CompactionEndEvent CompactionStartEvent ContinueError
        FallbackPolicy MessageEndEvent MessageStartEvent
        MessageUpdateEvent ModelFallbackEvent OutputMode OutputSettings OutputValidationError
        PendingApproval QueueMode ResumeError RunAbortedError RunError RunLimitExceeded
        RunLimits RunPolicy RunResult ToolExecutionEndEvent ToolExecutionStartEvent
        ToolExecutionUpdateEvent TranscriptChangedError TurnEndEvent TurnStartEvent agent_loop
        agent_loop_continue approve deny edit run_agent_loop run_agent_loop_continue
        stream_proxy sub_agent_tool tool
    """,
    "pi_trio.agent.hooks": """
        AfterToolCallContext AfterToolCallHook AfterToolCallResult AgentListener
        AgentLoopTurnUpdate AgentRequestUpdate AgentTurnContext AgentTurnDecision ApprovalPolicy
        BeforeToolCallContext BeforeToolCallHook BeforeToolCallResult CompactionRequest
        ConvertToLlmHook FallbackPredicate FinishTurnHook GetApiKeyHook MessagePoll
        PrepareNextTurnHook PrepareRequestContext PrepareRequestHook ShouldStopAfterTurnHook
        SignalHook SummarizeHook ToolUpdateCallback TransformContextHook default_convert_to_llm
    """,
    "pi_trio.agent.extend": """
        ABORTED_TOOL_TEXT AGENT_EVENT_BUFFER AgentCreatedHook AgentEventStream
        DEFAULT_AGENT_IDENTITY DEFAULT_FALLBACK_ON DEFAULT_MAX_OUTPUT_RETRIES FINAL_RESULT_TOOL
        RUN_LIMIT_DIAGNOSTIC RunCounters RunStatus ToolCallOutcome as_tool_result call_hook
        is_approval_placeholder on_agent_created pending_approvals positional_arity
        run_limit_details run_tool_call
    """,
    "pi_trio.agent.compaction": """
        CHARS_PER_TOKEN SUMMARIZER_SYSTEM_PROMPT SUMMARY_PREFIX SUMMARY_PROMPT SUMMARY_SUFFIX
        TOOL_RESULT_SUMMARY_CHARS TURN_PREFIX_PROMPT UPDATE_PROMPT CompactionPlan TokenEstimate
        compacted_transcript estimate_tokens is_summary_message plan_compaction
        serialize_conversation summary_message
    """,
}
# the namespaces of each top level, where the names that left it live
NAMESPACES = {
    "pi_trio.ai": [m for m in TIERS if m.startswith("pi_trio.ai.")],
    "pi_trio.agent": [m for m in TIERS if m.startswith("pi_trio.agent.")],
}

PUBLIC_MODULES = [
    *TIERS,
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


@pytest.mark.parametrize("name", list(TIERS))
def test_each_tier_exports_exactly_its_names(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == sorted(TIERS[name].split())


def test_each_name_has_one_home_and_the_top_levels_hold_about_half() -> None:
    homes: dict[str, list[str]] = {}
    for module, names in TIERS.items():
        for n in names.split():
            homes.setdefault(n, []).append(module)
    # two shortcuts: ``from pi_trio import Agent, tool``, and the agent layer's abort types
    assert {n: m for n, m in homes.items() if len(m) > 1} == {
        "Agent": ["pi_trio", "pi_trio.agent"],
        "tool": ["pi_trio", "pi_trio.agent"],
        "AbortController": ["pi_trio.ai", "pi_trio.agent"],
        "AbortSignal": ["pi_trio.ai", "pi_trio.agent"],
    }
    for top, spaces in NAMESPACES.items():
        at_top = len(TIERS[top].split())
        below = sum(len(TIERS[m].split()) for m in spaces)
        assert at_top < 0.55 * (at_top + below), (top, at_top, below)


@pytest.mark.parametrize(
    ("top", "name"),
    [(top, n) for top, spaces in NAMESPACES.items() for m in spaces for n in TIERS[m].split()],
)
def test_a_name_that_left_a_top_level_says_where_it_went(top: str, name: str) -> None:
    module = importlib.import_module(top)
    (home,) = [m for m in NAMESPACES[top] if name in TIERS[m].split()]
    text = f"{top}.{name} moved to {home}: use 'from {home} import {name}'"
    with pytest.raises(AttributeError) as caught:
        getattr(module, name)
    assert str(caught.value) == text
    assert not hasattr(module, name)
    with pytest.raises(ImportError) as imported:
        exec(f"from {top} import {name}", {})
    assert str(imported.value) == text


@pytest.mark.parametrize("top", list(NAMESPACES))
def test_an_unknown_name_is_the_usual_error(top: str) -> None:
    module = importlib.import_module(top)
    with pytest.raises(AttributeError, match=f"^module '{top}' has no attribute 'nowhere'$"):
        _ = module.nowhere
    with pytest.raises(ImportError, match=f"^cannot import name 'nowhere' from '{top}'"):
        exec(f"from {top} import nowhere", {})


def test_the_top_package_gives_agent_and_tool_without_importing_the_agent_up_front() -> None:
    code = (
        "import sys, pi_trio\n"
        "print('pi_trio.agent' in sys.modules)\n"
        "from pi_trio import Agent, tool\n"
        "import pi_trio.agent\n"
        "print(Agent is pi_trio.agent.Agent and tool is pi_trio.agent.tool)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    import pi_trio

    with pytest.raises(AttributeError, match=r"^module 'pi_trio' has no attribute 'Agnet'$"):
        _ = pi_trio.Agnet  # type: ignore[attr-defined]


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
    # the hooks' contexts and results: with the hooks' own types (issue 31's tiers)
    hooks = importlib.import_module("pi_trio.agent.hooks")
    for n in ["BeforeToolCallContext", "BeforeToolCallResult", "AfterToolCallResult"]:
        assert hasattr(hooks, n), n
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
    models = importlib.import_module("pi_trio.ai.models")
    for n in ["resolve_model", "UnknownModelError"]:
        assert n in ai.__all__, n
    for n in [
        "ModelPromptCache",
        "ModelInputLimits",
        "ModelImageInputLimits",
        "ModelImageResizeOptions",
    ]:
        assert n in models.__all__, n
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


# --------------------------------------------------------------------------- the errors

TREE_LINE = re.compile(
    r"^(?P<lead>[│├└─ ]*?)(?P<name>\w+)(?: \((?P<also>[\w.]+)\))? +(?P<module>pi_trio[\w.]*)$"
)


def drawn_tree(text: str) -> list[tuple[int, str, str | None, str]]:
    """``(depth, class, second base, module)`` for each line of the drawing in ``text``
    (the block that starts with the ``PiError`` line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("PiError "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    rows = []
    for line in lines[start:]:
        match = TREE_LINE.match(line[indent:])
        if match is None:
            break
        rows.append((len(match["lead"]) // 4, match["name"], match["also"], match["module"]))
    return rows


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


def test_the_drawn_exception_hierarchy_is_the_real_one() -> None:
    from pi_trio.ai import _errors

    rows = drawn_tree(_errors.__doc__ or "")
    parents: list[type] = []
    drawn: set[type] = set()
    for depth, name, also, module in rows:
        cls = getattr(importlib.import_module(module), name)
        assert name in importlib.import_module(module).__all__, name
        del parents[depth:]
        if parents:
            assert cls.__bases__[0] is parents[-1], name
        if also is not None:
            assert also in {
                f"{b.__module__.split('._')[0]}.{b.__name__}".removeprefix("builtins.")
                for b in cls.__bases__[1:]
            }, (name, also)
        else:
            assert len(cls.__bases__) == 1, name
        parents.append(cls)
        drawn.add(cls)
    root = drawn and next(iter(c for c in drawn if c.__name__ == "PiError"))
    assert rows[0][1] == "PiError"
    # every PiError subclass of the public modules is drawn (tests define none of their own)
    for module in PUBLIC_MODULES:
        importlib.import_module(module)
    ours = {c for c in _all_subclasses(root) if c.__module__.startswith("pi_trio.")}  # type: ignore[arg-type]
    assert {c.__name__ for c in ours - drawn} == set()


# --------------------------------------------------------------------------- README, examples


def _python_sources() -> list[tuple[str, str]]:
    """``(where, code)`` for each Python block of the README and each example."""
    readme = (ROOT / "README.md").read_text()
    sources = [
        (f"README.md block {i}", block)
        for i, block in enumerate(re.findall(r"^```python\n(.*?)^```$", readme, re.M | re.S))
    ]
    sources += [
        (str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))
    ]
    return sources


def _wrong_imports(where: str, code: str) -> list[str]:
    """Imports of a private pi_trio module, or of a name its module does not export."""
    wrong = []
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a fragment with ``...``: read its import lines alone
        lines = [line for line in code.splitlines() if re.match(r"(from|import) pi_trio", line)]
        tree = ast.parse("\n".join(lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [(node.module, [alias.name for alias in node.names])]
        else:
            continue
        for module, names in modules:
            if module.split(".")[0] != "pi_trio":
                continue
            if any(part.startswith("_") for part in module.split(".")):
                wrong.append(f"{where}: imports the private module {module}")
                continue
            exported = set(importlib.import_module(module).__all__)
            for name in names:
                if name not in exported and f"{module}.{name}" not in sys.modules:
                    wrong.append(f"{where}: {name} is not in {module}'s __all__")
    return wrong


def test_the_readme_and_the_examples_import_only_public_names_from_their_tier() -> None:
    sources = _python_sources()
    assert len(sources) > 20
    assert [w for where, code in sources for w in _wrong_imports(where, code)] == []


def test_the_import_check_sees_a_private_module_and_a_name_of_another_tier() -> None:
    code = "from pi_trio.ai._types import Usage\nfrom pi_trio.ai import MessageBuilder, Usage\n"
    assert _wrong_imports("x", code) == [
        "x: imports the private module pi_trio.ai._types",
        "x: MessageBuilder is not in pi_trio.ai's __all__",
    ]


def test_the_readme_lists_every_name_that_moved_with_its_new_home() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Where the names moved") :]
    section = section[: section.index("\n## ")]
    listed = {
        (home, name)
        for home, names in re.findall(r"^- `(pi_trio[\w.]+)`: (.+)$", section, re.M)
        for name in re.findall(r"`(\w+)`", names)
    }
    moved = {(m, n) for spaces in NAMESPACES.values() for m in spaces for n in TIERS[m].split()}
    assert listed == moved


@pytest.mark.parametrize("top", list(NAMESPACES))
def test_type_checkers_do_not_see_the_moved_names_hook(top: str) -> None:
    """The package's ``__getattr__`` is defined only outside type checking, so a type
    checker reports a moved name as unknown (as the README says) instead of typing it as
    whatever ``__getattr__`` returns."""
    path = ROOT / top.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text())
    hidden = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and ast.unparse(node.test) == "not typing.TYPE_CHECKING"
        and any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in node.body)
    ]
    anywhere = [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
    ]
    assert len(hidden) == 1
    assert len(anywhere) == 1
