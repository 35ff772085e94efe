"""Privacy of what a compaction reads (README "Steering a conversation"): the summary call's prompt and
the authors a summary records come from the turn's privacy- and block-filtered history, so a
privacy-FULL or blocked author's text never reaches the summary call, and they are never recorded as
an author of it. Generated channels as in ``test_properties`` (scratch database, rolled back)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given

from bot.conversation.steering import Kind
from bot.conversation.tools.base import history_authors
from chatcontext.core.compaction import summary_prompt
from chatcontext.core.config import StageConfig
from chatcontext.replay import replay_snapshot
from tests.budgets import database_property
from tests.chatcontext.pipeline.documents import marker
from tests.strategies import channels


@pytest.mark.django_db(databases=["default", "replay"])
@database_property
@given(channels())
def test_a_hidden_authors_text_never_reaches_the_summary_call(channel: tuple[dict[str, Any], set[int], int]) -> None:
    doc, hidden, trigger = channel
    ctx = replay_snapshot(doc, config=StageConfig(), transcriber=None)

    for kind in (Kind.SUMMARY, Kind.ROLEPLAY_SCENE):
        prompt = "\n".join(item.text for item in summary_prompt(ctx, kind))
        assert not [n for n in hidden if re.search(rf"\b{marker(n)}\b", prompt)]
        assert re.search(rf"\b{marker(trigger)}\b", prompt)  # the search finds visible text
    tokens = {marker(n) for n in hidden}
    hidden_authors = {m["author"]["id"] for m in doc["messages"] if tokens & set(m["content"].split())}
    assert not hidden_authors & set(history_authors(ctx))
