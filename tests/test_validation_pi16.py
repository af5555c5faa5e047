"""Tool-argument validation, differentially against the original.

tests/fixtures/validation_pi16.json was recorded by tests/record_validation_pi16.mjs from
@earendil-works/pi-ai 1.6.0 (validateToolArguments, which coerces and checks with
@earendil-works/pi-schema): for each (schema, arguments) case, the coerced value or the
exact error text. Every case runs through `validate_tool_arguments` and must give the same,
except the deviations listed in DEVIATIONS, each with its reason.

Numbers are compared as JavaScript sees them: pi_trio reads an integer exactly, JavaScript
reads the nearest double, so an integer past 2**53 is compared (as a value, as a number
converted to a string, and in the "Received arguments" text) by that double.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pi_trio.ai import Tool, ToolArgumentsError, validate_tool_arguments
from pi_trio.ai._json._jsnum import js_number_text

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "validation_pi16.json"
RECORDER = HERE / "record_validation_pi16.mjs"
RECORDED = json.loads(FIXTURE.read_text())
CASES: list[dict[str, Any]] = RECORDED["cases"]
SCHEMAS: list[Any] = RECORDED["schemas"]

# Where pi_trio deliberately differs from 1.6, by (group, arguments as recorded).
ACCEPTS_MORE = "accepts more"
"""1.6 rejects; pi_trio returns a value, which the schema (checked again, and by plain
jsonschema) accepts."""
REJECTS_EXACTLY = "rejects exactly"
"""1.6 accepts only because JavaScript rounded the number; pi_trio rejects what was sent."""
REJECTS_CLEARLY = "rejects clearly"
"""1.6 fails with a crash message; pi_trio rejects with a validation error."""
UNVALIDATED = "unvalidated"
"""The schema is not usable: 1.6 fails, pi_trio logs a warning and returns the arguments."""
PATTERN_IGNORED = "pattern ignored"
"""1.6 fails every call because it cannot compile a ``pattern``; pi_trio ignores that
pattern (logging a warning once) and checks and coerces the rest."""

DEVIATIONS: dict[tuple[str, str], str] = {
    # A null for an optional property that is a $ref (msgspec writes every nested Struct as
    # one): 1.6 keeps the null and fails; pi_trio drops it, as for any optional property.
    ("optional nulls", '{"r":null}'): ACCEPTS_MORE,
    # Optional nulls behind the root $ref of a msgspec Struct schema: 1.6 converts them
    # (count -> 0, tags -> ["null"]) and fails on the enum; pi_trio, only because that
    # fails, drops them all, so the Struct's defaults apply.
    (
        "msgspec struct",
        '{"path":"a","edits":[{"old_text":"x","new_text":"y","count":null}],'
        '"ratio":null,"tags":null,"mode":null}',
    ): ACCEPTS_MORE,
    # "9007199254740993" for an integer with maximum 2**53: JavaScript reads 2**53 and
    # accepts; pi_trio reads the integer sent, which is above the maximum.
    ("numbers", '{"big":9007199254740993}'): REJECTS_EXACTLY,
    ("numbers", '{"big":"9007199254740993"}'): REJECTS_EXACTLY,
    # A boolean schema as the whole parameters: 1.6 fails with "Invalid value used as weak
    # map key" (its validator cache takes only objects); pi_trio validates against it.
    ("root false", "{}"): REJECTS_CLEARLY,
    ("root false", '{"v":1}'): REJECTS_CLEARLY,
    ("root true", '{"v":1}'): ACCEPTS_MORE,
    # $refs that go round without a check: 1.6 overflows its stack; pi_trio logs a
    # warning and leaves the arguments unvalidated.
    ("refs cycle", '{"v":"1"}'): UNVALIDATED,
    # A property whose schema is a number: 1.6 fails every call ("A schema must be an object
    # or a boolean, got 5"); pi_trio logs a warning and leaves the arguments unvalidated.
    ("unusable schema", '{"a":1,"b":"2"}'): UNVALIDATED,
    # A pattern that is no regular expression at all (in JavaScript, with or without u).
    ("invalid schema pattern", '{"a":"x"}'): PATTERN_IGNORED,
    ("invalid schema pattern", '{"a":5}'): PATTERN_IGNORED,
}

_BIG_INTEGER = re.compile(r"(?<![\w.])-?\d{16,}(?![\w.])")


def _as_javascript(value: Any) -> Any:
    """``value`` as JavaScript holds it: numbers as doubles, whole ones as ints, booleans
    and nulls apart from numbers, objects as ordered pairs."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        number = float(value)
        return ("number", int(number) if number.is_integer() else number)
    if isinstance(value, list):
        return [_as_javascript(item) for item in value]
    if isinstance(value, dict):
        return [(key, _as_javascript(item)) for key, item in value.items()]
    return _rounded_text(value) if isinstance(value, str) else value


def _rounded_text(text: str) -> str:
    """``text`` with every integer of 16 digits or more spelled as its nearest double."""
    return _BIG_INTEGER.sub(lambda m: js_number_text(float(int(m.group()))), text)


def _run(case: dict[str, Any]) -> tuple[str, Any]:
    schema = SCHEMAS[case["schema"]]
    tool = Tool(name="calc", description="d", parameters=schema)
    try:
        return "value", validate_tool_arguments(tool, json.loads(case["arguments"]))
    except ToolArgumentsError as error:
        return "error", str(error)


def _check(case: dict[str, Any]) -> str | None:
    """None when pi_trio agrees with the recording, else what differs."""
    kind, got = _run(case)
    deviation = DEVIATIONS.get((case["group"], case["arguments"]))
    schema = SCHEMAS[case["schema"]]
    if deviation == ACCEPTS_MORE:
        assert "error" in case, "listed as accepting more, but 1.6 accepts it too"
        if kind != "value":
            return f"expected a value, got {got}"
        again = validate_tool_arguments(Tool(name="calc", description="d", parameters=schema), got)
        if again != got or not jsonschema.Draft202012Validator(schema).is_valid(got):
            return f"{got!r} is not a value the schema accepts"
        return None
    if deviation in (REJECTS_EXACTLY, REJECTS_CLEARLY):
        return None if kind == "error" else f"expected a validation error, got {got!r}"
    if deviation == PATTERN_IGNORED:
        return None if kind == "value" else f"expected a value, got {got}"
    if deviation == UNVALIDATED:
        return None if kind == "value" and got == json.loads(case["arguments"]) else repr(got)
    if "value" in case:
        if kind != "value" or _as_javascript(got) != _as_javascript(case["value"]):
            return f"expected value {case['value']!r}, got {kind} {got!r}"
        return None
    if kind != "error" or _rounded_text(got) != _rounded_text(case["error"]):
        return f"expected error {case['error']!r}, got {kind} {got!r}"
    return None


GROUPS = sorted({case["group"] for case in CASES})
ECMA = importlib.util.find_spec("regress") is not None and importlib.util.find_spec("ada_url")
NEEDS_ECMA = {"strings", "format regex"}
"""Groups whose patterns only JavaScript's regex engine reads as 1.6 does."""


@pytest.mark.parametrize("group", GROUPS)
def test_validation_agrees_with_the_original(group: str) -> None:
    if group in NEEDS_ECMA and not ECMA:
        pytest.skip("needs the ecma extra (pip install 'pi-trio[ecma]')")
    differences = [
        f"{case['arguments']}: {difference}"
        for case in CASES
        if case["group"] == group and (difference := _check(case)) is not None
    ]
    assert differences == []


def test_every_listed_deviation_names_exactly_one_recorded_case() -> None:
    seen = Counter((case["group"], case["arguments"]) for case in CASES)
    assert {key: seen[key] for key in DEVIATIONS} == dict.fromkeys(DEVIATIONS, 1)


def test_the_fixture_covers_what_it_claims() -> None:
    assert RECORDED["recordedWith"]["pi-ai"] == "1.6.0"
    assert RECORDED["recordedWith"]["pi-schema"] == "1.6.0"
    groups = {case["group"].split()[0] for case in CASES}
    assert {"scalar", "format", "anyOf", "oneOf", "enum", "const", "msgspec"} <= groups
    assert sum("error" in case for case in CASES) > 500
    assert sum("value" in case for case in CASES) > 500


# --------------------------------------------------------------------------- the recorder


@pytest.mark.node
def test_recording_again_gives_the_committed_fixture(tmp_path: Path) -> None:
    directory = os.environ.get("PI16_DIR")
    if shutil.which("node") is None or not directory:
        pytest.skip(
            "set PI16_DIR to a folder with the original installed (npm install --prefix "
            "<dir> @earendil-works/pi-ai@1.6.0) and have node on PATH"
        )
    if not (Path(directory) / "node_modules" / "@earendil-works" / "pi-ai").is_dir():
        pytest.skip(f"PI16_DIR={directory} holds no @earendil-works/pi-ai")
    out = tmp_path / "validation.json"
    done = subprocess.run(
        ["node", str(RECORDER), directory, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    again = json.loads(out.read_text())
    assert again["schemas"] == RECORDED["schemas"]
    assert again["cases"] == RECORDED["cases"]
