"""The fault suite, tool-argument validation: schemas and arguments made to make the
check unbounded (a pattern that backtracks without end, a million-value ``enum``, tens
of thousands of missing properties, ``uniqueItems`` over thousands of objects, a costly
schema over a long array), and an abort while a check runs. Every limit is a step count
or a size, so the tests do not depend on the machine's speed; the one time limit (a
pattern in its child process) is lowered to make its test quick."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import TextContent, Tool, ToolArgumentsError, validate_tool_arguments
from pi_trio.ai._validation import _budget as budgets
from pi_trio.ai._validation._engine import check
from pi_trio.ai._validation._re2 import to_re2
from pi_trio.ai._validation._regex import is_linear, regex_search
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

REPO = Path(__file__).resolve().parent.parent
CATASTROPHIC = "^(a+)+$"  # exponential in a backtracking engine
LOOKAHEAD_CATASTROPHIC = "^(?=(a+)+$)x"  # the same inside a lookahead: no linear engine


# Each item costs a few steps (and fails): nested arrays, so that no keyword counts the
# whole outer array at once.
COSTLY = {
    "type": "array",
    "items": {
        "anyOf": [
            {"type": "array", "items": {"type": "string", "minLength": 5}},
            {"type": "object"},
        ]
    },
}


def tool(parameters: Any, name: str = "t") -> Tool:
    return Tool(name=name, description="", parameters=parameters)


def string_with(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}


def failure(parameters: Any, arguments: Any) -> str:
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(tool(parameters), arguments)
    return str(info.value)


# --------------------------------------------------------------------------- patterns


def test_a_backtracking_pattern_is_matched_in_linear_time() -> None:
    # In a child with a deadline: before the RE2 engine, this ran for ever in C.
    code = (
        "from pi_trio.ai import Tool, validate_tool_arguments\n"
        f"schema = {string_with(CATASTROPHIC)!r}\n"
        "tool = Tool(name='t', description='', parameters=schema)\n"
        "try:\n"
        "    validate_tool_arguments(tool, {'a': 'a' * 100_000 + '!'})\n"
        "except Exception as exc:\n"
        "    print(str(exc).splitlines()[1])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.stdout.startswith("  - a: "), done.stderr
    assert is_linear(CATASTROPHIC)
    assert not is_linear(LOOKAHEAD_CATASTROPHIC)


# ECMAScript pieces whose RE2 rewriting must match the same strings.
_PIECES = st.sampled_from(
    [
        "a", "b", "ab", ".", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B",
        "[a-c]", "[^a-c]", "[\\s\\S]", "[\\w.-]", "[\\d\\-]", "[]", "[^]", "\\u00e9",
        "\\u{1F600}", "\\ud83d\\ude00", "\\x41", "\\t", "\\n", "\\/", "\\.", "\\p{L}",
        "\\P{Lu}", "\\p{Script=Greek}", "(?<n>a)", "(?:a|b)", "(a|)", "^", "$", "é",
    ]
)  # fmt: skip
_QUANTIFIERS = st.sampled_from(["", "*", "+", "?", "{2}", "{1,3}", "*?", "+?", "{0,}"])
_PATTERNS = st.lists(st.tuples(_PIECES, _QUANTIFIERS), min_size=1, max_size=5).map(
    lambda parts: "".join(p + (q if p not in ("^", "$", "\\b", "\\B") else "") for p, q in parts)
)
_TEXTS = st.text(st.sampled_from("ab AB1_-.\t\n\r\u2028\u00a0\ufeffé😀αΩ/A"), max_size=12)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=_PATTERNS, text=_TEXTS)
def test_the_linear_engine_matches_what_the_ecmascript_engine_matches(
    pattern: str, text: str
) -> None:
    import regress

    try:
        ecma = regress.Regex(pattern, "u")
    except regress.RegressError:
        return
    expected = ecma.find(text) is not None
    if to_re2(pattern) is not None and is_linear(pattern):
        assert regex_search(pattern, text) is expected, (pattern, to_re2(pattern), text)


def test_a_pattern_that_backtracks_in_its_child_process_is_stopped_at_the_time_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(budgets, "REGEX_TIME_BUDGET_S", 0.2)
    before = _children()
    text = failure(string_with(LOOKAHEAD_CATASTROPHIC), {"a": "a" * 60 + "!"})
    assert "against the pattern '^(?=(a+)+$)x' took longer than 0.2 s (REGEX_TIME_BUDGET_S)" in text
    assert budgets.running_budgets() == 0
    assert _children() == before  # the child was killed and reaped
    # a lookaround pattern that answers in time is checked as ECMAScript reads it
    validate_tool_arguments(tool(string_with("^(?=a)[a-z]+$")), {"a": "abc"})
    assert failure(string_with("^(?!a)[a-z]+$"), {"a": "abc"}).splitlines()[1].startswith("  - a: ")


def _children() -> set[str]:
    """The pids of this process's living children (Linux); other tests' servers too."""
    found: set[str] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as file:
            found.update(file.read().split())
    return found


# --------------------------------------------------------------------------- sizes and steps


def test_a_schema_past_the_node_limit_is_refused_naming_it() -> None:
    huge = {"type": "object", "properties": {"a": {"enum": list(range(1_000_000))}}}
    text = failure(huge, {"a": 5})
    assert f"more than {budgets.MAX_SCHEMA_NODES} JSON values (MAX_SCHEMA_NODES)" in text
    large = {"type": "object", "properties": {"a": {"enum": list(range(19_000))}}}
    assert validate_tool_arguments(tool(large), {"a": 18_999}) == {"a": 18_999}


def test_a_check_past_the_step_limit_fails_naming_it() -> None:
    costly = {"type": "object", "properties": {"a": COSTLY}}
    budget = budgets.Budget(limit=1_000)
    _, details = check("t", costly, {"a": [["a"]] * 10_000}, budget)
    assert 1_000 < budget.steps < 1_100  # stopped at the step past the limit
    assert details == [
        (
            "root",
            "checking the arguments took more than 1000 steps (MAX_VALIDATION_STEPS); "
            "the schema is too costly for arguments this large",
        )
    ]
    # the default limit, through the public function
    text = failure({"type": "array", "items": {"enum": list(range(19_000))}}, [-1] * 1_000)
    assert f"more than {budgets.MAX_VALIDATION_STEPS} steps (MAX_VALIDATION_STEPS)" in text


def test_unique_items_over_thousands_of_objects_costs_a_step_per_item() -> None:
    budget = budgets.Budget()
    items = [{"a": i, "b": [i, {"c": i}]} for i in range(5_000)]
    _, details = check("t", {"type": "array", "uniqueItems": True}, [*items, {"a": 7}], budget)
    assert details is None
    _, details = check(
        "t", {"type": "array", "uniqueItems": True}, [*items, {"b": [3, {"c": 3}], "a": 3}]
    )
    assert details == [("root", "expected unique items")]
    assert budget.steps < 30_000


def test_the_error_text_is_bounded_however_many_problems() -> None:
    names = [f"p{i}" for i in range(15_000)]
    text = failure({"type": "object", "required": names}, {"x": "y" * 100_000})
    lines = text.splitlines()
    assert lines[1:4] == ["  - p0: missing", "  - p1: missing", "  - p2: missing"]
    problems = [line for line in lines if line.startswith("  - ")]
    assert len(problems) == budgets.MAX_ERROR_DETAILS + 1
    assert problems[-1] == (
        f"  - ... more problems, not listed (MAX_ERROR_DETAILS: {budgets.MAX_ERROR_DETAILS})"
    )
    received = '{\n  "x": "' + "y" * 100_000 + '"\n}'
    cut = len(received) - budgets.MAX_ERROR_ARGUMENTS_CHARS
    assert text.endswith(
        f"{received[: budgets.MAX_ERROR_ARGUMENTS_CHARS]}\n... ({cut} more characters)"
    )
    assert len(text) < 8_000


# --------------------------------------------------------------------------- stopping a check


def test_a_cancelled_check_stops_at_its_next_step() -> None:
    costly = {"type": "object", "properties": {"a": COSTLY}}
    budget = budgets.Budget(limit=10**12)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            check("t", costly, {"a": [["a"]] * 10**5}, budget)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    while budget.steps < 1_000:  # under way (the count, not the clock, says so)
        worker.join(0.001)
    budget.cancel()
    at_cancel = budget.steps
    worker.join(30)
    assert not worker.is_alive()
    assert [type(e) for e in outcome] == [budgets.ValidationCancelled]
    assert budget.steps - at_cancel <= 2


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_an_abort_while_arguments_are_checked_ends_the_run_and_stops_the_check(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budgets, "REGEX_TIME_BUDGET_S", 600.0)  # only the abort can end it
    ran: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        ran.append(params)
        return AgentToolResult(content=[TextContent(text="ran")])

    slow = AgentTool(
        name="slow",
        label="slow",
        description="",
        parameters=string_with(LOOKAHEAD_CATASTROPHIC),
        execute=execute,
    )
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("slow", {"a": "a" * 60 + "!"})], stop_reason="toolUse"
            )
        ]
    )
    ticks = 0
    before = _children()

    async def main() -> Agent:
        nonlocal ticks
        agent = Agent(model=faux.get_model(), tools=[slow], stream_fn=faux)
        async with anyio.create_task_group() as group:
            group.start_soon(agent.prompt, "go")
            while budgets.running_budgets() == 0 or _children() == before:
                await anyio.sleep(0.001)  # the loop runs while the check does
                ticks += 1
            agent.abort()
        return agent

    agent = anyio.run(main, backend=backend)
    result = agent.state.messages[-1]
    assert result.role == "toolResult"
    assert result.content[0].text == "Operation aborted"
    assert ran == []
    for _ in range(3000):  # the abandoned worker notices within a step: its child is killed
        if budgets.running_budgets() == 0:
            break
        threading.Event().wait(0.01)
    assert budgets.running_budgets() == 0
    assert _children() == before
    assert ticks > 0


def test_a_non_boundary_is_never_found_inside_a_multi_byte_character() -> None:
    """RE2 sees a UTF-8 character's bytes one by one, so its ``\\B`` matched between the two
    bytes of U+00A0; ECMAScript has no position there, and ``1\\u00a01`` has no non-boundary
    (hypothesis found it)."""
    assert to_re2("\\B") is None  # checked by the ECMAScript engine instead
    assert regex_search("\\B", "1\u00a01") is False
    assert regex_search("\\B", "ab") is True
    assert regex_search("x\\By", "x\u00e9y") is False
