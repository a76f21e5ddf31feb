"""The chat page in a real headless browser (Debian's chromium driven by Playwright): pick an
agent, stream an answer token by token, see a tool call and its result, approve it, list and
reopen conversations."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright
from server_support import RunningServer, scripted_config, tool_entries

import agentrig
from agentrig.plugin import PROVIDERS

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CALL = {"tool_calls": [{"name": "bump", "arguments": {"counter": "visits"}}]}


def bump(counter: str) -> str:
    """Increment a counter (asks for approval in the default mode)."""
    return f"{counter} bumped"


def entries() -> agentrig.MemorySource:
    return tool_entries("modify", bump)


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


def served() -> RunningServer:
    script: list[dict[str, Any]] = [
        CALL,
        {"text": "Bumped it, all done.", "chunk_size": 2},
        {"text": "Still here."},
    ]
    config = scripted_config(
        script,
        agents={"assistant": {"provider": "local", "model": "m", "tools": ["bump"]}},
        repeat=False,
    )
    settings = {"ui": True, "agents": {"assistant": {"approvals": "api"}}}
    return RunningServer(config, settings, memory=entries())


def test_chat_page_streams_shows_tools_approves_and_reopens_sessions(page: Page) -> None:
    with served() as srv:
        page.goto(srv.base_url + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "yes")
        expect(page.locator("#agent option")).to_have_text(["assistant"])
        # count text mutations: a streamed answer arrives in many small pieces
        page.evaluate(
            """() => {
                window.pieces = 0;
                new MutationObserver((records) => { window.pieces += records.length; })
                    .observe(document.getElementById("transcript"),
                             { characterData: true, subtree: true, childList: true });
            }"""
        )
        page.fill("#prompt", "bump the visits counter")
        page.click("#send")
        approval = page.locator(".approval")
        expect(approval).to_contain_text("bump")
        approval.locator("button.allow").click()
        tool = page.locator(".turn.assistant .tool")
        expect(tool.locator(".result")).to_have_text("\u2192 visits bumped")
        assistant = page.locator(".turn.assistant").last
        expect(assistant).to_have_attribute("data-done", "completed")
        expect(assistant).to_contain_text("Bumped it, all done.")
        assert page.evaluate("window.pieces") >= 8  # 20 characters in 2-character tokens
        # the conversation is listed; a new one clears the page; reopening restores it
        sessions = page.locator("#sessions button")
        expect(sessions).to_have_count(1)
        expect(sessions.first).to_contain_text("bump the visits counter")
        page.click("#new-session")
        expect(page.locator("#transcript .turn")).to_have_count(0)
        sessions.first.click()
        expect(page.locator(".turn.user")).to_have_text(["bump the visits counter"])
        expect(page.locator(".tool .result")).to_have_text("\u2192 visits bumped")
        expect(page.locator(".turn.assistant").last).to_contain_text("Bumped it, all done.")
        # and continues where it left off
        page.fill("#prompt", "still there?")
        page.click("#send")
        expect(page.locator(".turn.assistant").last).to_contain_text("Still here.")

        async def last_request() -> list[str]:
            request = srv.rt.catalog(PROVIDERS).require("local").requests[-1]
            return [type(m).__name__ for m in request.messages]

        assert srv.call(last_request) == [
            "UserMessage",
            "AssistantMessage",
            "ToolMessage",
            "AssistantMessage",
            "UserMessage",
        ]


def test_the_page_is_off_unless_enabled_and_ships_no_third_party_code() -> None:
    config = scripted_config()
    with RunningServer(config, {"agents": {"assistant": {}}}) as srv:
        assert httpx.get(srv.base_url + "/").status_code == 404
        assert httpx.get(srv.base_url + "/openapi.json").status_code == 404
    with RunningServer(config, {"ui": True, "docs": True, "agents": {"assistant": {}}}) as srv:
        page = httpx.get(srv.base_url + "/")
        assert page.status_code == 200
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert "http" not in page.text.replace("http-equiv", "")
        script = httpx.get(srv.base_url + "/ui/chat.js").text
        assert "https://" not in script
        assert "http://" not in script
        assert "/v1/chat/completions" in httpx.get(srv.base_url + "/openapi.json").json()["paths"]


def look(place: str) -> str:
    """Look somewhere (read-only)."""
    return f"nothing at {place}"


def test_phone_width_enter_budget_dates_and_agent_switch(page: Page) -> None:
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [{"name": "look", "arguments": {"place": "desk"}}],
            "usage": {"prompt": 7, "completion": 3},
        },
        {"text": "Hello from the other agent."},
    ]
    model = {"provider": "local", "model": "m"}
    config = scripted_config(
        script, agents={"assistant": {**model, "tools": ["look"]}, "other": model}, repeat=False
    )
    # the assistant's run may use 5 tokens: its first model call already used 10
    settings = {"ui": True, "agents": {"assistant": {"max_run_tokens": 5}, "other": {}}}
    with RunningServer(config, settings, memory=tool_entries("inspect", look)) as srv:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(srv.base_url + "/")
        expect(page.locator("body")).to_have_attribute("data-ready", "yes")
        # one column at phone width: the sidebar above the conversation, nothing wider
        sidebar = page.locator("#sidebar").bounding_box()
        composer = page.locator("#composer").bounding_box()
        assert sidebar is not None
        assert composer is not None
        assert sidebar["y"] + sidebar["height"] <= composer["y"]
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # Shift+Enter is a new line, Enter sends
        page.click("#prompt")
        page.keyboard.type("first line")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("second line")
        expect(page.locator("#transcript .turn")).to_have_count(0)
        page.keyboard.press("Enter")
        expect(page.locator(".turn.user")).to_have_text(["first line\nsecond line"])
        # the run stopped by its budget says so
        assistant = page.locator(".turn.assistant").last
        expect(assistant).to_have_attribute("data-done", "incomplete")
        expect(assistant.locator(".stopped")).to_contain_text("reached a limit")
        # the conversation is listed with its title, agent and date
        listed = page.locator("#sessions button")
        expect(listed).to_have_count(1)
        expect(listed.first.locator(".title")).to_have_text("first line\nsecond line")
        expect(listed.first.locator(".meta")).to_contain_text("assistant")
        expect(listed.first.locator(".meta")).to_contain_text(str(time.localtime().tm_year))
        # choosing another agent starts a new conversation with it, not an error
        page.select_option("#agent", "other")
        expect(page.locator("#transcript .turn")).to_have_count(0)
        expect(page.locator("#status")).to_have_text("New conversation with other.")
        page.fill("#prompt", "hi")
        page.keyboard.press("Enter")
        expect(page.locator(".turn.assistant").last).to_contain_text("Hello from the other agent.")
        expect(page.locator("#status")).to_have_text("")
        expect(listed).to_have_count(2)
        # at desktop width the sidebar sits beside the conversation
        page.set_viewport_size({"width": 1280, "height": 800})
        wide = page.locator("#sidebar").bounding_box()
        main = page.locator("main").bounding_box()
        assert wide is not None
        assert main is not None
        assert wide["x"] + wide["width"] <= main["x"]
