"""A long conversation keeps each request's start equal to the previous request's (issue 29): the
profile block does not reorder when the oldest message leaves the window (H-22) and the history
window advances in steps (BC2-07a), so a provider's prefix cache reuses most of every request.

The conversation is the one ``bench/conversation.py`` measures for the README: two speakers (a
member and the main persona answering through the echo provider) on the demo server, whose window is
50 messages, for 60 turns after the window filled. The assertion is on a ratio of bytes, not a time."""

from __future__ import annotations

import importlib.util
import sys

from bot.playground.service import send_playground_message
from chatcontext.models import PromptRecord
from tests.bot.playground.conftest import MINA
from tests.paths import REPO_ROOT

WINDOW = 50
# The window is full after 25 turns (a message and its reply each); 60 more are the steady state.
FILL_TURNS = WINDOW // 2
STEADY_TURNS = 60


def conversation_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_conversation", REPO_ROOT / "bench" / "conversation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_conversation", module)
    spec.loader.exec_module(module)
    return module


def test_steady_state_requests_repeat_at_least_nine_tenths_of_the_previous_request(demo):
    conversation = conversation_module()
    assert demo.server.settings.message_fetch_limit == WINDOW
    conversation.converse(
        lambda text: send_playground_message(demo.channel, MINA, f"{demo.mention()} {text}"),
        FILL_TURNS + STEADY_TURNS,
    )

    records = list(PromptRecord.objects.filter(channel_disc_id=demo.channel.disc_id).order_by("created_at", "pk"))
    assert len(records) == FILL_TURNS + STEADY_TURNS and all(not r.error for r in records)
    figures = conversation.measure(records)
    summary = conversation.summary(figures, window=WINDOW, steady_from=FILL_TURNS)
    # Every step shows: the history is cut several messages at a time, never one by one.
    steps = [t for t in figures[FILL_TURNS:] if t.prefix_share < 0.5]
    assert 1 <= len(steps) <= 4
    assert summary["prefix_share_mean"] >= 0.90
