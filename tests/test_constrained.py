"""JSON-schema constrained sampling for tools: the strict subset as pi 1.6 writes it
(recorded from the original, re-checked under node when it is installed), which tools
go strict, and Claude's strict-tool limits remembered per session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_trio.ai import ProviderError, Tool
from pi_trio.ai.providers import _strict_limits as strict_limits
from pi_trio.ai.providers._anthropic_tools import anthropic_strict_tool_unsupported
from pi_trio.ai.providers._constrained import (
    make_strict_tool_schema,
    prefers_strict_sampling,
    strict_tool_schema,
)
from pi_trio.ai.providers._strict_limits import (
    forget_strict_tool_limits,
    has_exceeded_strict_tool_limits,
    is_strict_tool_limit_message,
    mark_strict_tool_limits_exceeded,
)

HERE = Path(__file__).parent
CASES = HERE / "fixtures" / "constrained" / "cases.json"
RECORDED = HERE / "fixtures" / "constrained" / "strict_tool_schemas_pi16.json"
RECORDER = HERE / "record_constrained_pi16.mjs"


def _tool(schema: Any, strict: str = "require") -> Tool:
    return Tool(
        name="t",
        description="d",
        parameters=schema,
        constrained_sampling={"type": "json_schema", "strict": strict},
    )


def _recorded() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(RECORDED.read_text())
    return cases


@pytest.mark.parametrize("case", _recorded(), ids=lambda case: json.dumps(case["schema"])[:60])
def test_strict_tool_schemas_are_the_originals(case: dict[str, Any]) -> None:
    schema = json.loads(json.dumps(case["schema"]))
    if "error" in case:
        with pytest.raises(ProviderError) as caught:
            strict_tool_schema(_tool(schema), True)
        assert str(caught.value) == case["error"]
    else:
        strict = strict_tool_schema(_tool(schema), True)
        assert strict == case["strict"]
        # same key order as the original's JSON
        assert json.dumps(strict) == json.dumps(case["strict"])
    assert schema == case["schema"]  # the tool's own schema is left alone


def test_the_recorded_cases_are_the_committed_inputs() -> None:
    assert [case["schema"] for case in _recorded()] == json.loads(CASES.read_text())


@pytest.mark.node
def test_the_original_still_writes_the_recorded_schemas() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    package = None
    for base in filter(None, [os.environ.get("PI_AI_DIR"), os.environ.get("PI16_DIR")]):
        for candidate in (Path(base), Path(base) / "node_modules" / "@earendil-works" / "pi-ai"):
            if (candidate / "dist" / "api" / "constrained-sampling.js").is_file():
                package = candidate
    if package is None:
        pytest.skip("set PI_AI_DIR (or PI16_DIR) to the installed @earendil-works/pi-ai 1.6")
    done = subprocess.run(
        ["node", str(RECORDER), str(package), str(CASES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == _recorded()


def test_which_tools_go_strict() -> None:
    loose = {"type": "object", "properties": {"a": {"allOf": []}}}
    fits = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    plain = Tool(name="t", description="d", parameters=fits)
    assert strict_tool_schema(plain, True) is None
    grammar = Tool(
        name="t", description="d", parameters=fits, constrained_sampling={"type": "grammar"}
    )
    assert strict_tool_schema(grammar, True) is None
    assert strict_tool_schema(_tool(fits, "prefer"), True) == {
        **fits,
        "additionalProperties": False,
    }
    assert strict_tool_schema(_tool(loose, "prefer"), True) is None
    assert strict_tool_schema(_tool(fits, "prefer"), False) is None
    with pytest.raises(ProviderError, match=r"but strict tools are unsupported\.$"):
        strict_tool_schema(_tool(fits), False)
    assert prefers_strict_sampling(_tool(fits, "prefer"))
    assert not prefers_strict_sampling(_tool(fits))
    assert not prefers_strict_sampling(plain)


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "integer", "minimum": 1}, "minimum: 1 is unsupported"),
        ({"type": "array", "items": {"type": "string"}, "minItems": 2}, "minItems: 2"),
        ({"type": "string", "format": "regex"}, 'format: "regex" is unsupported'),
        ({"type": "string", "format": ["x"]}, 'format: ["x"] is unsupported'),
        ({"type": "string", "format": "email", "minLength": 3}, None),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1}, None),
    ],
)
def test_claudes_own_refusals(schema: dict[str, Any], reason: str | None) -> None:
    root = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    if reason is None:
        strict = make_strict_tool_schema(root, anthropic_strict_tool_unsupported)
        assert strict["properties"]["a"] == schema
    else:
        with pytest.raises(ValueError, match=reason.replace("[", r"\[").replace("]", r"\]")):
            make_strict_tool_schema(root, anthropic_strict_tool_unsupported)


def test_the_limit_messages_are_claudes() -> None:
    assert is_strict_tool_limit_message("400 Too many strict tools (21). The maximum is 20.")
    assert is_strict_tool_limit_message("The compiled grammar is too large for this request")
    assert is_strict_tool_limit_message(
        "Schemas contains too many parameters with union types (17)"
    )
    assert not is_strict_tool_limit_message("prompt is too long")


def test_the_remembered_sessions_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strict_limits, "MAX_REMEMBERED_SESSIONS", 3)
    forget_strict_tool_limits()
    try:
        for name in "abcd":
            mark_strict_tool_limits_exceeded(name)
        mark_strict_tool_limits_exceeded("b")  # already known: keeps its place
        mark_strict_tool_limits_exceeded(None)
        assert [has_exceeded_strict_tool_limits(n) for n in "abcd"] == [False, True, True, True]
        assert not has_exceeded_strict_tool_limits(None)
        forget_strict_tool_limits("c")
        assert not has_exceeded_strict_tool_limits("c")
        assert has_exceeded_strict_tool_limits("d")
    finally:
        forget_strict_tool_limits()
