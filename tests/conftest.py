"""Shared fixtures: every async test runs on trio (pytest-trio, ``trio_mode``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def otel(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An OpenTelemetry SDK pipeline (``tests/otel_support.Pipeline``); content capture
    is off unless a test turns it on, and recording must log no error."""
    from .otel_support import Pipeline, no_recording_errors

    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    yield Pipeline()
    no_recording_errors(caplog)


@pytest.fixture(autouse=True)
def _fresh_sessions() -> Iterator[None]:
    """Providers remember sessions (Anthropic's threads, refused strict tools) as pi 1.6
    does, process-wide: each test starts without another test's sessions."""
    from pi_trio.ai.providers import cleanup_session_resources

    cleanup_session_resources()
    yield
    cleanup_session_resources()


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a Temporal dev server (``tests/temporal_server.py``), started once
    per session on a free loopback port and stopped at its end."""
    from .temporal_server import dev_server

    with dev_server(tmp_path_factory.mktemp("temporal")) as address:
        yield address


def pytest_report_header() -> str:
    """The contract chaos suite's seed, so a failing session can be replayed."""
    from .test_contract_chaos import chaos_seed_header

    return chaos_seed_header()
