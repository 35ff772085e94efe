"""The stage's SQL query count per turn does not grow with messages or participants (common brief:
one query per kind of row). Counted around `build_turn_context` only, after the snapshot rows are
loaded; the shared cache starts empty each time, so the asset rows are read in every run."""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from chatcontext.core.config import StageConfig
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import (
    load_snapshot_rows,
    snapshot_turn,
    validate_snapshot,
)
from tests.budgets import STAGE_QUERY_BOUND
from tests.chatcontext.pipeline.documents import generate_snapshot

pytestmark = pytest.mark.django_db


def stage_queries(doc: dict[str, Any], around: Callable[[], AbstractContextManager[Any]] = nullcontext) -> int:
    """SQL queries of one `build_turn_context` call (rows loaded and rolled back around it)."""
    validate_snapshot(doc)
    cache.clear()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        with CaptureQueriesContext(connection) as captured, around():
            ctx = build_turn_context(
                inputs.turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig()
            )
        transaction.set_rollback(True)
    assert ctx.context_items
    return len(captured.captured_queries)


def channel(messages: int, participants: int) -> dict[str, Any]:
    return generate_snapshot(
        random.Random(7), messages=messages, participants=participants, memories_per_user=3, reminders_per_user=1
    )


def test_query_count_is_the_same_for_10_and_100_messages(django_assert_max_num_queries: Any) -> None:
    small = stage_queries(channel(10, 5), lambda: django_assert_max_num_queries(STAGE_QUERY_BOUND))
    assert stage_queries(channel(100, 5), lambda: django_assert_max_num_queries(small)) == small


def test_query_count_is_the_same_for_2_and_50_participants(django_assert_max_num_queries: Any) -> None:
    few = channel(60, 2)
    many = channel(60, 50)
    assert len({m["author"]["id"] for m in many["messages"]}) > 40  # the 50-user channel really is busy
    baseline = stage_queries(few, lambda: django_assert_max_num_queries(STAGE_QUERY_BOUND))
    assert stage_queries(many, lambda: django_assert_max_num_queries(baseline)) == baseline
