"""The benchmark workloads at a tiny size, so the scripts keep working (no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import __main__ as runner
from benchmarks import (
    _scale,
    _ts,
    mappers,
    skeleton_w10,
    soak,
    w1,
    w2,
    w3,
    w4,
    w7_big_tool_args,
    w8_footprint,
    w9_long_conversation,
    w9c_compaction,
    w10_many_agents,
    w12_typed_tool,
    wire_json,
)
from benchmarks.scripted import Turn, big_arguments, expected_events, tool_turns
from pi_trio.testing import serve_sse


def test_expected_event_counts_match_the_workload_table() -> None:
    assert expected_events([Turn(100_000, 0)], 1) == 100_010
    assert expected_events(tool_turns(200, 20, 4), 201) == 10_830
    assert expected_events(tool_turns(5, 10, 2), 6) * 1_000 == 170_000
    assert expected_events(tool_turns(1, 10, 1), 2) == 43


def test_big_arguments_are_exactly_the_requested_size_and_reject_tiny_sizes() -> None:
    assert len(big_arguments(1 << 20)) == 1 << 20
    with pytest.raises(ValueError, match="at least 14 bytes"):
        big_arguments(3)


async def test_w1_streams_every_delta_into_the_final_text() -> None:
    out = await w1.run(deltas=50)
    assert out["final_text_len"] == 400


async def test_w2_runs_tool_turns_with_parallel_echo_calls() -> None:
    out = await w2.run(turns_with_tools=3, text=2, tools=2)
    assert (out["provider_calls"], out["messages"], out["tool_calls"]) == (4, 11, 6)


async def test_w3_runs_agents_concurrently() -> None:
    out = await w3.run(agents=4, turns_with_tools=2)
    assert out["events"] == expected_events(tool_turns(2, 10, 2), 3) * 4


async def test_w4_aborts_every_agent_without_late_deltas_or_leftover_tasks() -> None:
    out = await w4.run(agents=5, deltas=20)
    assert out["stop_aborted"] == 5
    assert out["deltas_after_abort"] == 0
    assert out["tasks_left"] == 0


async def test_w9_times_turns_early_and_late_in_a_long_conversation() -> None:
    out = await w9_long_conversation.run(turns_with_tools=300)
    assert out["turns"] == 301
    assert out["us_per_turn_at_100"] > 0
    assert out["us_per_turn_late"] > 0


async def test_w9c_compacts_a_long_conversation_and_keeps_the_transcript_short() -> None:
    out = await w9c_compaction.run(turns_with_tools=600)
    assert out["turns"] == 601
    assert out["compactions"] >= 3
    assert out["longest_transcript"] < 600
    assert out["us_per_turn_late"] > 0


async def test_w9_on_the_faux_provider_makes_the_same_turns_and_events() -> None:
    scripted = await w9_long_conversation.run(turns_with_tools=200)
    faux = await w9_long_conversation.run(turns_with_tools=200, faux=True)
    assert faux["turns"] == 201
    assert faux["events"] == scripted["events"]


async def test_w10_reports_time_memory_and_the_collectors_share_per_agent() -> None:
    out = await w10_many_agents.run_one(agents=6)
    assert out["events"] == 6 * w10_many_agents.PER_AGENT
    assert out["us_per_agent"] > 0
    assert {"kb_per_agent", "gc_share", "gc_collections"} <= set(out)


def test_w10_floor_runs_each_size_in_its_own_process_and_combines_them() -> None:
    out = _scale.run_sizes("benchmarks.skeleton_w10", "floor", "W10", sizes=(2, 4))
    assert out["events"] == 4 * skeleton_w10.PER_AGENT
    assert {"us_per_agent_2", "us_per_agent_4", "kb_per_agent_4", "time_growth"} <= set(out)


async def test_w12_validates_every_typed_call_and_times_it() -> None:
    out = await w12_typed_tool.run(tool_turns=4)
    assert out["turns"] == 5
    assert out["us_validation_per_call"] > 0
    assert out["us_jsonschema_per_call"] > 0


async def test_w7_streams_big_arguments_in_64_byte_deltas() -> None:
    out = await w7_big_tool_args.run({"4KiB": 4096})
    assert out["toolcall_deltas"] == {"4KiB": 64}
    assert set(out["s_per_mib_reading"]) == {"4KiB"}


def test_wire_json_times_the_common_and_the_keeping_paths() -> None:
    out = wire_json.measure(1, messages_count=30)
    assert set(out) == {
        "bytes",
        "decode_ms",
        "encode_ms",
        "decode_unknown_fields_ms",
        "encode_unknown_fields_ms",
        "decode_exact_ms",
    }


async def test_w8_reports_cpu_and_retention_per_run() -> None:
    out = await w8_footprint.run(total=10, concurrency=5, warmup=5, traced=5)
    assert out["events"] == 10 * w8_footprint.PER_RUN
    assert {"cpu_ms_per_run", "retained_objects_per_run", "retained_bytes_per_run"} <= set(out)


async def test_the_soak_runs_its_mix_and_reports_memory_and_descriptors() -> None:
    reply = soak.make_reply()
    untimed = {kind: weight for kind, weight in soak.MIX.items() if kind not in soak.TIMED}
    async with serve_sse(lambda request: reply(request)) as server:
        out = await soak.soak(server.url, runs=90, every=30, concurrency=3, mix=untimed)
    assert [point["runs"] for point in out["series"]] == [0, 30, 60, 90]
    assert all(point["rss_mb"] > 0 and point["open_fds"] > 0 for point in out["series"])
    assert sum(out["outcomes"].values()) == 90
    assert {"stop", "error", "aborted", "cancelled"} <= set(out["outcomes"])
    assert "RSS growth after the first checkpoint" in soak.table(out)


def test_mapper_benchmark_feeds_every_providers_streams_to_done() -> None:
    out = mappers.run(deltas=20, rounds=1)
    assert set(out) == {
        f"{name} {kind}" for name in mappers.PROVIDERS for kind in ("text", "thinking")
    }
    assert all(line["sse_events"] >= 20 and line["events_out"] >= 20 for line in out.values())


def test_runner_rejects_unknown_workloads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        runner.main(["W99"])
    assert "unknown or missing workloads ['W99']" in capsys.readouterr().err


def test_table_shows_medians_ratios_and_workload_notes() -> None:
    pi = {"wall_s": 2.0, "events_per_s": 5_000, "peak_rss_mb": 30.0, "checks": {"tasks_left": 0}}
    floor = {"wall_s": 1.0, "peak_rss_mb": 20.0}
    text = runner.table([{"workload": "W4", "pi_trio": pi, "floor": floor, "x_floor": 2.0}], False)
    assert "2.000" in text
    assert "2.00" in text
    assert "5,000" in text
    assert "W4: tasks_left=0" in text


def test_table_notes_show_the_floors_figure_beside_pi_trios() -> None:
    pi = {"wall_s": 2.0, "events_per_s": 1, "peak_rss_mb": 30.0, "checks": {"time_growth": 1.4}}
    floor = {"wall_s": 1.0, "peak_rss_mb": 20.0, "checks": {"time_growth": 1.2}}
    text = runner.table([{"workload": "W10", "pi_trio": pi, "floor": floor}], False)
    assert "W10: time_growth=1.4 (floor 1.2)" in text


def test_paired_mode_is_skipped_with_a_reason_without_node(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_ts.shutil, "which", lambda name: None)
    folder, message = _ts.prepare(tmp_path)
    assert folder is None
    assert message == "paired mode skipped: node and npm not found on PATH"


def test_catalog_load_probe_reports_every_figure_from_a_fresh_process() -> None:
    from benchmarks import catalog_load

    out = catalog_load.run_probe(catalog_load.ROOT)
    assert out["models"] >= 1500
    assert out["providers"] >= 35
    assert all(out[key] is not None and out[key] > 0 for key in catalog_load.FIGURES)


@pytest.mark.parametrize(("replay", "ops"), [("never", 3 * 2 + 2), ("safe", 2 * 2 + 2)])
def test_durable_steps_counts_the_operations_a_run_records(replay: str, ops: int) -> None:
    # two tool turns and the answer: a request and a call's two steps a turn (one for a
    # replay="safe" tool), the last request and the run's closing look, nothing else
    command = [sys.executable, "-m", "benchmarks.durable_steps", "--db", "sqlite"]
    command += ["--turns", "2", "--runs", "1", "--replay", replay]
    out = subprocess.run(
        command, cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-4000:]
    (summary,) = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{"db"')]
    assert (summary["db"], summary["steps_per_run"], summary["ops_per_run"]) == ("sqlite", 7, ops)
    assert summary["ratio"] > 0
