"""The chat page of ``examples/chat_app.py`` in a real browser: Debian's Chromium, headless,
driven by Selenium through chromedriver, against the example running as a person runs it
(``--faux``, a process of its own on a free loopback port).

Each test saves a screenshot under its pytest tmp dir; with ``PI_TRIO_SCREENSHOTS=<dir>``
they are copied there too. ``scripts/ensure_browser.sh`` installs the browser (``.ci/run``
and ``make test`` call it); without it these tests fail in CI and are skipped elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from .test_examples import EXAMPLES

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# Without the background-networking flags Chromium reaches for Google's services, which a
# machine without a network answers by refusing connections that slow every page down.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1100,900",
]
WAIT_S = 20.0  # the longest a step may take before the test fails


def _browser_missing() -> str | None:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        return (
            "chromium and chromium-driver are not installed: run scripts/ensure_browser.sh as root"
        )
    return None


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    """The example, serving on a free port, with a scripted model fast enough for tests and
    slow enough to watch (and stop) an answer arriving."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))}
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "chat_app.py"), "--faux", "--port", "0",
         "--faux-speed", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.match(r"serving (http://\S+)", line)
        assert match, (
            f"the example did not start: {line!r} {process.stderr.read() if process.stderr else ''}"
        )
        yield match.group(1)
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} (.ci/run installs them)")
        pytest.skip(missing)

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shoot(browser: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """``shoot(label)`` saves a screenshot of the page as ``<test>-<label>.png``."""

    def save(label: str) -> Path:
        shot = tmp_path / f"{request.node.name}-{label}.png"
        assert browser.save_screenshot(str(shot)), shot
        target = os.environ.get("PI_TRIO_SCREENSHOTS")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(target) / shot.name)
        return shot

    return save


@pytest.fixture
def page(browser: Any, app_url: str, shoot: Callable[[str], Path]) -> Iterator[Any]:
    """The chat page, freshly loaded; a screenshot of it is saved when the test ends."""
    browser.get(app_url + "/")
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete", "load")
    yield browser
    shoot("end")


def wait_for(condition: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``condition`` (a real browser renders in real time) until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


def ask(page: Any, text: str) -> None:
    box = page.find_element("id", "prompt")
    box.send_keys(text)
    page.find_element("id", "send").click()


def js(page: Any, script: str) -> Any:
    return page.execute_script(script)


LAST_TURN = "const t = [...document.querySelectorAll('.turn.assistant')].pop();"


def last_turn(page: Any) -> dict[str, Any]:
    """What the last answer shows: its texts, thinking, tool cards, errors and outcome."""
    return js(
        page,
        LAST_TURN
        + """
        if (!t) return null;
        const texts = (sel) => [...t.querySelectorAll(sel)].map((n) => n.textContent);
        return {
          outcome: t.dataset.outcome || null,
          texts: texts('.text'),
          thinking: texts('details.thinking .thinking-text'),
          thinkingOpen: [...t.querySelectorAll('details.thinking')].map((d) => d.open),
          tools: [...t.querySelectorAll('.tool')].map((c) => ({
            name: c.querySelector('.tool-name').textContent,
            args: c.querySelector('.tool-args').textContent,
            result: c.querySelector('.tool-result').textContent,
            status: c.dataset.status,
          })),
          errors: texts('.error-message'),
          stopped: texts('.stopped'),
        };
        """,
    )


def record_text_lengths(page: Any) -> None:
    """Note the length of the answer's text at every change the page makes to it."""
    js(
        page,
        """
        window.__lengths = [];
        new MutationObserver(() => {
          const t = [...document.querySelectorAll('.turn.assistant .text')].pop();
          if (t) window.__lengths.push(t.textContent.length);
        }).observe(document.getElementById('log'),
                   {subtree: true, childList: true, characterData: true});
        """,
    )


def finished(page: Any) -> dict[str, Any]:
    turn = wait_for(lambda: (t := last_turn(page)) and t["outcome"] and t, "the run to end")
    wait_for(lambda: js(page, "return document.body.dataset.status") == "idle", "the page idle")
    return turn  # type: ignore[no-any-return]


def test_an_answer_streams_in_with_its_thinking_folded_and_the_tool_call_shown(
    page: Any, shoot: Callable[[str], Path]
) -> None:
    shoot("empty")
    record_text_lengths(page)
    ask(page, "What is 6 * 7?")
    assert js(page, "return document.body.dataset.status") == "running"
    turn = finished(page)

    assert turn["outcome"] == "success"
    assert turn["texts"] == [
        "Let me multiply that for you.",
        "The answer is 42. I used the multiply tool to be sure; ask me another one whenever "
        "you like.",
    ]
    # streamed: the page showed the answer growing, not only whole
    lengths = js(page, "return window.__lengths")
    partial = {n for n in lengths if 0 < n < len(turn["texts"][-1])}
    assert len(partial) >= 3, lengths
    assert turn["thinking"] == ["The user wants 6 times 7. Arithmetic: use the tool."]
    assert turn["thinkingOpen"] == [False]  # thinking is apart, folded until opened
    (card,) = turn["tools"]
    assert card == {"name": "multiply", "args": '{ "a": 6, "b": 7 }', "result": "42",
                    "status": "done"}  # fmt: skip
    assert turn["errors"] == []
    assert turn["stopped"] == []
    # the thinking opens on a click
    page.find_element("css selector", "details.thinking summary").click()
    assert last_turn(page)["thinkingOpen"] == [True]


def test_the_conversation_is_kept_across_turns(page: Any) -> None:
    ask(page, "Hello there")
    assert finished(page)["texts"] == [
        "You said: “Hello there”. That is message 1 of our conversation. Ask me to multiply "
        "two numbers, to tell a long story, or to fail."
    ]
    ask(page, "What is 3 * 5?")
    assert finished(page)["texts"][-1].startswith("The answer is 15.")
    ask(page, "And again")
    # the model saw the whole thread: three user messages, the tool call and its result
    (text,) = finished(page)["texts"]
    assert "message 3 of our conversation" in text
    users = js(page, "return [...document.querySelectorAll('.turn.user')].map(n => n.textContent)")
    assert users == ["Hello there", "What is 3 * 5?", "And again"]


def test_stop_mid_answer_aborts_the_run_and_keeps_what_arrived(
    page: Any, shoot: Callable[[str], Path]
) -> None:
    ask(page, "Tell me a long story")
    wait_for(lambda: len((last_turn(page)["texts"] or [""])[0]) > 40, "the story to start")
    assert page.find_element("id", "send").text == "Stop"
    shoot("streaming")
    page.find_element("id", "send").click()
    turn = finished(page)
    shoot("stopped")

    assert turn["outcome"] == "cancelled"
    (story,) = turn["texts"]
    assert story.startswith("Once upon a time")
    assert 40 < len(story) < 1000  # the whole story is about 2400 characters
    assert turn["stopped"] == ["Stopped. The answer keeps what arrived before you pressed Stop."]
    assert turn["errors"] == []
    assert js(page, "return document.getElementById('status').textContent") == "Stopped"
    time.sleep(0.3)  # nothing more arrives after the stop
    assert last_turn(page)["texts"] == [story]
    assert page.find_element("id", "send").text == "Send"
    # the stopped answer is part of the conversation: the next question goes on from it
    ask(page, "Thanks anyway")
    assert "message 2 of our conversation" in finished(page)["texts"][0]


def test_a_failed_run_shows_its_error_in_the_page(page: Any) -> None:
    ask(page, "Please fail")
    turn = finished(page)
    assert turn["outcome"] == "error"
    assert turn["errors"] == [
        "529 Overloaded: the model is busy (a scripted failure, as you asked). Try again in a "
        "moment."
    ]
    assert js(page, "return document.getElementById('status').textContent") == "Last run failed"
    heading = page.find_element("css selector", ".turn.assistant .error strong").text
    assert heading == "The run failed"
