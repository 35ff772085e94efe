"""BC13 through the whole turn path: the platform endpoint's window cuts the playground's prompt, the
record keeps what was cut with its reason (the inspector's exclusion log explains it), and the token
count is calibrated by what a provider reports (bot.conversation.budget)."""

from __future__ import annotations

from bot.conversation.budget import CALIBRATION, MAX_SCALE, context_budget
from bot.conversation.providers import ProviderConfig
from bot.playground.service import send_playground_message
from chatcontext.core.budget import BUDGET_REASON
from chatcontext.core.tokens import count_text
from chatcontext.records.inspector import exclusion_entries
from tests.bot.playground.conftest import MINA


def test_bc13_a_small_window_cuts_the_oldest_history_and_the_record_says_so(demo, settings):
    settings.LLM_CONTEXT_WINDOW, settings.LLM_MAX_REPLY_TOKENS = 1536, 256
    for turn in range(12):
        [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} turn {turn}: " + "lorem ipsum " * 20)

    texts = [item["text"] for item in record.context_items]
    counted = sum(count_text(t) + 4 for t in texts if t.strip()) + 3
    assert context_budget(ProviderConfig(kind="echo")).estimate(counted) <= 1536 - 256
    cuts = [e for e in record.exclusions if e["reason"] == BUDGET_REASON]
    assert cuts and all(e["scope"] == "message" for e in cuts)  # only history had to go
    assert any("turn 11:" in t for t in texts)  # the answered message stays
    assert not any("turn 0:" in t for t in texts)  # the oldest went first
    [row] = {r.explanation for r in exclusion_entries(cuts)}
    assert row.startswith("cut to fit the model's context window")


def test_calibration_follows_the_reported_prompt_tokens_within_bounds():
    key = ("platform", "m")
    assert CALIBRATION.scale(key) == 1.0
    CALIBRATION.observe(key, counted=1000, usage={"prompt_tokens": 1300})
    assert CALIBRATION.scale(key) == 1.3
    CALIBRATION.observe(key, counted=1000, usage={"prompt_tokens": 1000})
    assert 1.0 < CALIBRATION.scale(key) < 1.3  # weighted towards the newest, not replaced by it
    CALIBRATION.observe(key, counted=10, usage={"prompt_tokens": 10_000})
    assert CALIBRATION.scale(key) <= MAX_SCALE
    before = CALIBRATION.scale(key)
    for usage in ({}, {"prompt_tokens": True}, {"prompt_tokens": -5}, {"prompt_items": 9}):
        CALIBRATION.observe(key, counted=1000, usage=usage)
    assert CALIBRATION.scale(key) == before
