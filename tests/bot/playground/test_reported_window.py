"""BC13 with the window the endpoint's server reports (issue 29 item 1): a server that says its window
is smaller than the setting gets prompts that fit what it said; a server that says nothing, answers
404 or garbage gets prompts fitted to the setting."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.playground.service import send_playground_message
from chatcontext.core.budget import BUDGET_REASON
from chatcontext.core.tokens import count_text
from tests.bot.fake_llm import FakeLLMServer, ThreadedFakeLLMServer
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import use_llm

# The tools' descriptions take about a thousand tokens of any window: 16 long turns overflow the
# reported 4,096 tokens and fit the setting's 16,384.
REPORTED, SETTING, REPLY, TURNS = 4096, 16384, 256, 16


@pytest.fixture
def llm(demo: Demo, settings) -> Iterator[FakeLLMServer]:  # type: ignore[no-untyped-def]
    settings.LLM_CONTEXT_WINDOW, settings.LLM_MAX_REPLY_TOKENS = SETTING, REPLY
    with ThreadedFakeLLMServer() as server:
        use_llm(demo, server)
        yield server


def converse(demo: Demo):  # type: ignore[no-untyped-def]
    for turn in range(TURNS):
        [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} turn {turn}: " + "lorem ipsum " * 80)
    return record


def last_turn_prompt(server: FakeLLMServer) -> str:
    """The messages of the request that answered the last turn (short-term memory notes are asked apart)."""
    return str([r["messages"] for r in server.requests if f"turn {TURNS - 1}:" in str(r["messages"])][-1])


def received_tokens(server: FakeLLMServer) -> int:
    """The cl100k count of the last turn's prompt as the server received it, as the budget counts it."""
    [messages] = [r["messages"] for r in server.requests if str(r["messages"]) == last_turn_prompt(server)][-1:]
    return sum(count_text(m["content"]) + 4 for m in messages if m["content"].strip()) + 3


def test_a_reported_window_smaller_than_the_setting_is_the_one_the_prompt_fits(demo, llm):
    llm.n_ctx = REPORTED
    record = converse(demo)

    assert received_tokens(llm) * 1.1 <= REPORTED - REPLY  # the margin on top of the count still fits
    cuts = [e for e in record.exclusions if e["reason"] == BUDGET_REASON]
    assert any(e["scope"] == "message" for e in cuts)  # oldest history first
    assert "turn 0:" not in last_turn_prompt(llm)  # the oldest went first
    assert llm.limit_asks == ["/props"]  # once for the process, not once a turn


@pytest.mark.parametrize("limits_body", [None, "<html>502 Bad Gateway</html>", '{"default_generation_settings": 4}'])
def test_no_usable_report_leaves_the_setting(demo, llm, limits_body):
    llm.limits_body = limits_body  # None: both routes answer 404
    record = converse(demo)

    assert received_tokens(llm) > REPORTED - REPLY  # what a 4,096-token window would have cut was sent
    assert [e for e in record.exclusions if e["reason"] == BUDGET_REASON] == []
    assert "turn 0:" in last_turn_prompt(llm)
    assert llm.limit_asks == ["/props", "/v1/models"]
