"""A privacy-FULL (or blocked) user's words neither enter the prompt through a lorebook entry nor fire
one: a property over generated channels (tests/chatcontext/pipeline/test_properties.py's strategy)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from hypothesis import given

from chatcontext.core.config import StageConfig
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import load_snapshot_rows, snapshot_turn
from personas.models import Lorebook, LorebookEntry
from tests.budgets import database_property
from tests.chatcontext.pipeline.documents import marker
from tests.strategies import channels


@pytest.mark.django_db
@database_property
@given(channels())
def test_no_entry_fires_on_a_hidden_authors_words(channel: tuple[dict[str, Any], set[int], int]) -> None:
    """Every message n carries the word marker(n); the book has one entry keyed on each. Entries of
    privacy-FULL (and blocked) authors' messages never fire, nor does their text reach the prompt;
    the trigger's entry always does (the check can see a firing)."""
    doc, hidden, trigger = channel
    count = len(doc["messages"])
    cache.clear()
    with transaction.atomic():  # rolled back: the rows are written directly, not by the (durable) action
        loaded = load_snapshot_rows(doc)
        book = Lorebook.objects.create(server_id=loaded.server_id, scan_depth=count + 5, token_budget=100_000)
        LorebookEntry.objects.bulk_create(
            LorebookEntry(lorebook=book, uid=n, keys=[marker(n)], content=f"LORE-{n}-") for n in range(1, count + 1)
        )
        inputs = snapshot_turn(doc, loaded)
        ctx = build_turn_context(inputs.turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig())
        transaction.set_rollback(True)
    hits = [hit for item in ctx.context_items for hit in item.world_info or ()]
    prompt = "\n".join(item.text for item in ctx.context_items)
    fired = {hit["entry"] for hit in hits}
    assert not fired & hidden
    assert not [n for n in hidden if f"LORE-{n}-" in prompt]
    assert trigger in fired
