"""Issue 17: the personalization cache (chatcontext.personalization) — what a warm turn no longer
reads, what is never kept, and the query-count pins with a cold and a warm cache."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from chatcontext.core.config import StageConfig
from chatcontext.core.types import UserRow
from chatcontext.personalization import PersonalizationCache, UserReadSource
from chatcontext.pipeline import build_turn_context
from chatcontext.repository import PersonalizationVersions, UserReads
from chatcontext.snapshot import SnapshotTurn, load_snapshot_rows, snapshot_turn, validate_snapshot
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.budgets import STAGE_QUERY_BOUND
from tests.chatcontext.pipeline.documents import generate_snapshot, user_id

# The cold turn's one more statement: the versions, read before the rows they vouch for.
CACHED_COLD_BOUND = STAGE_QUERY_BOUND + 1


def loaded_turn(participants: int) -> tuple[dict[str, Any], Any]:
    doc = generate_snapshot(
        random.Random(7), messages=60, participants=participants, memories_per_user=3, reminders_per_user=1
    )
    validate_snapshot(doc)
    return doc, load_snapshot_rows(doc)


def turn_sql(inputs: SnapshotTurn, cache: PersonalizationCache | None) -> tuple[list[str], Any]:
    statements: list[str] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        ctx = build_turn_context(
            inputs.turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig(), personalization=cache
        )
    return statements, ctx


def user_row_reads(statements: list[str]) -> list[str]:
    return [s for s in statements if s.startswith('SELECT u."user_disc_id"')]


def registrations(statements: list[str]) -> list[str]:
    # SQLite writes INSERT OR IGNORE, PostgreSQL INSERT … ON CONFLICT DO NOTHING.
    return [s for s in statements if s.startswith("INSERT") and 'INTO "users"' in s]


def new_cache() -> PersonalizationCache:
    return PersonalizationCache(max_users=10_000, max_servers=8)


@pytest.mark.django_db(transaction=True)
def test_a_warm_turn_reads_no_user_rows_and_assembles_the_same_prompt() -> None:
    doc, loaded = loaded_turn(8)
    cache = new_cache()
    build_turn_context(**_args(snapshot_turn(doc, loaded)))  # registers the members without rows
    cold, cold_ctx = turn_sql(snapshot_turn(doc, loaded), cache)
    warm, warm_ctx = turn_sql(snapshot_turn(doc, loaded), cache)
    # The history's users are read once; everyone else the prompt may name is among them here, so
    # the naming read needs only their preferences, even on the cold turn.
    assert len(user_row_reads(cold)) == 1
    assert cold[0].startswith('SELECT "scope", "version"')
    assert user_row_reads(warm) == []
    assert len(warm) < len(cold)
    assert warm_ctx.context_items == cold_ctx.context_items


@pytest.mark.django_db(transaction=True)
def test_a_write_between_turns_is_in_the_next_turn() -> None:
    doc, loaded = loaded_turn(8)
    cache = new_cache()
    build_turn_context(**_args(snapshot_turn(doc, loaded)))
    turn_sql(snapshot_turn(doc, loaded), cache)
    user = m.DiscordUser.objects.get(user_disc_id=user_id(2))
    actions.update_profile(user, {"user_nickname": "Captain Two"}, actor=TEST_ACTOR)
    statements, ctx = turn_sql(snapshot_turn(doc, loaded), cache)
    assert user_row_reads(statements)  # the version moved: the rows are read again
    assert any("Captain Two" in item.text for item in ctx.context_items)


@pytest.mark.django_db
def test_rows_read_inside_a_transaction_are_never_kept() -> None:
    """A transaction may have written the rows it reads (a registration) and still roll back."""
    doc, loaded = loaded_turn(4)
    cache = new_cache()
    with transaction.atomic():
        turn_sql(snapshot_turn(doc, loaded), cache)
        first, _ = turn_sql(snapshot_turn(doc, loaded), cache)
        statements, _ = turn_sql(snapshot_turn(doc, loaded), cache)
    assert len(user_row_reads(statements)) == len(user_row_reads(first)) > 0


@pytest.mark.django_db(transaction=True)
def test_a_source_without_a_server_or_cache_reads_straight_through() -> None:
    m.DiscordUser.objects.create(user_disc_id="42", username="mina")
    for source in (UserReadSource(None, new_cache()), UserReadSource(1, None)):
        with CaptureQueriesContext(connection) as captured:
            assert set(source.load(["42"]).rows) == {"42"}
        assert len(captured) == 1  # no versions read


@pytest.mark.django_db(transaction=True)
def test_query_counts_do_not_grow_with_participants_cold_or_warm(django_assert_max_num_queries: Any) -> None:
    counts = []
    for participants in (2, 50):
        doc, loaded = loaded_turn(participants)
        cache = new_cache()
        build_turn_context(**_args(snapshot_turn(doc, loaded)))
        first, second = snapshot_turn(doc, loaded), snapshot_turn(doc, loaded)
        with django_assert_max_num_queries(CACHED_COLD_BOUND):
            cold, _ = turn_sql(first, cache)
        with django_assert_max_num_queries(len(cold) - 1):
            warm, _ = turn_sql(second, cache)
        counts.append((len(cold), len(warm)))
        m.Server.objects.all().delete()
        m.DiscordUser.objects.all().delete()
    assert counts[0] == counts[1]


def _args(inputs: SnapshotTurn) -> dict[str, Any]:
    return {
        "turn": inputs.turn,
        "transport": inputs.transport,
        "transcripts": inputs.transcripts,
        "config": StageConfig(),
    }


@pytest.mark.django_db(transaction=True)
def test_a_turn_that_registers_someone_lets_the_next_turn_see_their_row() -> None:
    """H-04 registration bumps the version: without it the next turn would still hold "no row" for
    the newcomer and register them again (the prompt itself may not show it)."""
    doc, loaded = loaded_turn(8)
    cache = new_cache()
    build_turn_context(**_args(snapshot_turn(doc, loaded)))
    actions.delete_user(m.DiscordUser.objects.get(user_disc_id=user_id(2)), actor=TEST_ACTOR)
    registering, _ = turn_sql(snapshot_turn(doc, loaded), cache)
    assert registrations(registering)
    after, ctx = turn_sql(snapshot_turn(doc, loaded), cache)
    assert not registrations(after)
    assert ctx.context_items == build_turn_context(**_args(snapshot_turn(doc, loaded))).context_items


def test_the_cache_keeps_at_most_its_bound() -> None:
    cache = PersonalizationCache(max_users=3, max_servers=2)
    versions = PersonalizationVersions(user_rows=1, server=1)

    def read(*ids: str) -> UserReads:
        return UserReads({i: UserRow(user_id=int(i), user_disc_id=i) for i in ids}, set(), {})

    cache.keep(1, versions, ["1", "2"], read("1", "2"))
    assert set(cache.lookup(1, versions, ["1", "2"])[0]) == {"1", "2"}
    cache.keep(1, versions, ["1", "2"], read("1", "2"))  # the same ids again: nothing new
    assert set(cache.lookup(1, versions, ["1", "2"])[0]) == {"1", "2"}
    cache.keep(1, versions, ["3", "4"], read("3", "4"))  # past the bound: everything goes first
    assert set(cache.lookup(1, versions, ["1", "2", "3", "4"])[0]) == {"3", "4"}
    cache.keep(2, versions, ["3"], read("3"))
    cache.keep(3, versions, ["3"], read("3"))  # a third server: the least recent one goes
    assert cache.lookup(1, versions, ["3"]) == ({}, set())
    cache.keep(2, versions, ["5", "6", "7", "8"], read("5", "6", "7", "8"))  # one read past the bound
    assert cache.lookup(2, versions, ["5"]) == ({}, set())


@pytest.mark.django_db(transaction=True)
def test_a_turn_reads_a_user_row_once_and_then_only_the_naming_preferences() -> None:
    """The per-turn store of ``UserReadSource``: what the history read is not read again, and the
    naming read of known users asks the preferences table alone, with the answer a full read gives."""
    server = m.Server.objects.create(server_disc_id="800000000000000001")
    alice = m.DiscordUser.objects.create(user_disc_id="100000000000000001", username="alice")
    m.DiscordUser.objects.create(user_disc_id="100000000000000002", username="bob")
    m.PersonalizationBlacklist.objects.create(server=server, user_disc_id="100000000000000002")
    m.UserPersonaNamingPreference.objects.create(user=alice, persona_lineage_id=7, nickname_override="Ali")
    ids, lineages = ["100000000000000001", "100000000000000002"], [7]
    whole = UserReadSource(server.pk).load(ids, naming_lineages=lineages)  # a fresh source reads everything
    source = UserReadSource(server.pk)

    with CaptureQueriesContext(connection) as history:
        source.load(ids)
    with CaptureQueriesContext(connection) as again:
        source.load(ids[:1])
    with CaptureQueriesContext(connection) as naming:
        named = source.load(ids, naming_lineages=lineages)

    assert len(history) == 1 and len(again) == 0
    assert len(naming) == 1
    assert 'FROM "user_persona_naming_preferences"' in naming[0]["sql"] and '"users"' not in naming[0]["sql"]
    assert (named.rows, named.blacklisted, named.preferences) == (whole.rows, whole.blacklisted, whole.preferences)
    assert named.blacklisted == {"100000000000000002"} and named.preferences[(alice.pk, 7)].nickname_override == "Ali"


@pytest.mark.django_db(transaction=True)
def test_a_naming_read_with_an_unknown_user_is_one_full_read() -> None:
    server = m.Server.objects.create(server_disc_id="800000000000000001")
    for n in (1, 2):
        m.DiscordUser.objects.create(user_disc_id=f"10000000000000000{n}", username=f"user{n}")
    source = UserReadSource(server.pk)
    source.load(["100000000000000001"])
    with CaptureQueriesContext(connection) as naming:
        named = source.load(["100000000000000001", "100000000000000002"], naming_lineages=[7])
    assert len(naming) == 1 and 'FROM "users"' in naming[0]["sql"]
    assert set(named.rows) == {"100000000000000001", "100000000000000002"}
