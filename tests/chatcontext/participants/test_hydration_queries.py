"""Database-backed hydration: the batched loaders and the constant query count (participants.md H-02,
H-04, H-14, H-15, H-21; data-model.md §2.10, §2.11; §8 T-27, T-28, T-32, T-33)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chatcontext.core.participants.model import ActivePersonaScope, PreparedParticipantContext
from chatcontext.core.types import MemberInfo
from chatcontext.participants.hydration import ParticipantTurn, RequestSnapshot, TurnUserReads
from chatcontext.participants.items import ParticipantItems, build_participant_context_items
from chatcontext.participants.loaders import DatabaseHydrationDeps
from chatcontext.repository import load_server, load_user_rows_and_blacklist, persona_info, user_row
from personas import models as m
from tests.chatcontext.participants.builders import CHANNEL, NOW_MS, B, G
from tests.chatcontext.participants.hydration_builders import (
    FakeTransport,
    bot_seed,
    participant_turn,
    prepared,
    user_seed,
)

NOW = datetime.fromtimestamp(NOW_MS / 1000, tz=UTC)
# Rows, privacy, blacklist, naming preferences, memories, reminders, plus the personalization
# version bump, one insert and one read-back when someone must be registered: the same for 2 or 200
# participants.
HYDRATION_QUERY_BOUND = 9
# With the turn's own user, blacklist and naming reads handed over (the pipeline's step 10): memories
# and reminders, plus the registration's version bump, insert and read-back and the newcomer's naming
# preferences.
HYDRATION_AFTER_TURN_READS_BOUND = 6


def snowflake(n: int) -> str:
    return f"4{n:017d}"


@pytest.fixture
def world(db):  # type: ignore[no-untyped-def]
    server = m.Server.objects.create(server_disc_id=G, name="Guild", registration_locale="ja")
    m.ServerSettings.objects.filter(server=server).update(timezone_offset=Decimal("9"))
    tomori = m.Persona.objects.create(server=server, persona_nickname="Tomori", persona_lineage_id=10001)
    lilya = m.Persona.objects.create(server=server, persona_nickname="Lilya", is_alter=True, persona_lineage_id=10002)
    return server, tomori, lilya


def scope(persona: m.Persona) -> ActivePersonaScope:
    return ActivePersonaScope(persona.persona_id, persona.persona_lineage_id, not persona.is_alter)


def run(
    prep: PreparedParticipantContext,
    persona: m.Persona,
    transport: FakeTransport,
    *,
    snapshot: RequestSnapshot | None = None,
    impersonated: str | None = None,
) -> ParticipantItems:
    return run_with(prep, turn_inputs(persona, impersonated), transport, snapshot=snapshot)


def turn_inputs(persona: m.Persona, impersonated: str | None = None) -> ParticipantTurn:
    """What the pipeline has loaded before the participant step (read outside the counted block)."""
    config = load_server(G)
    assert config is not None
    return participant_turn(persona_info(persona), impersonated=impersonated, srv=config)


def run_with(
    prep: PreparedParticipantContext,
    turn: ParticipantTurn,
    transport: FakeTransport,
    *,
    snapshot: RequestSnapshot | None = None,
) -> ParticipantItems:
    if snapshot is not None:
        turn = replace(turn, request_snapshot=snapshot)
    return build_participant_context_items(prep, turn, deps=DatabaseHydrationDeps(transport))  # type: ignore[arg-type]


def populate(server: m.Server, persona: m.Persona, count: int) -> tuple[list[str], FakeTransport]:
    """``count`` registered members, each with 10 memories and 10 reminders (the first one
    blacklisted), plus one member not registered yet."""
    ids = [snowflake(i) for i in range(count + 1)]
    m.DiscordUser.objects.bulk_create(
        [m.DiscordUser(user_disc_id=i, username=f"user{n}", user_nickname=f"Nick{n}") for n, i in enumerate(ids[:-1])]
    )
    users = list(m.DiscordUser.objects.filter(user_disc_id__in=ids))
    m.PersonalMemory.objects.bulk_create(
        [
            m.PersonalMemory(user=u, persona_lineage_id=(10001, 0, 10002)[k % 3], content=f"memory {k} of {u.username}")
            for u in users
            for k in range(10)
        ]
    )
    m.Reminder.objects.bulk_create(
        [
            m.Reminder(
                server=server,
                channel_disc_id=CHANNEL,
                user_discord_id=u.user_disc_id,
                reminder_purpose=f"reminder {k}",
                reminder_time=NOW + timedelta(hours=k + 1),
                persona=persona if k % 2 else None,
            )
            for u in users
            for k in range(10)
        ]
    )
    m.UserPersonaNamingPreference.objects.bulk_create(
        [m.UserPersonaNamingPreference(user=u, persona_lineage_id=10001, prefix_override="Dear") for u in users[:5]]
    )
    m.PersonalizationBlacklist.objects.create(server=server, user_disc_id=ids[0])
    transport = FakeTransport(
        cached={i: MemberInfo(i, username=f"user{n}", display_name=f"User {n}") for n, i in enumerate(ids)}
    )
    return ids, transport


@pytest.mark.parametrize("count", [2, 200])
def test_h02_hydration_query_count_is_constant(world, django_assert_max_num_queries, count):  # type: ignore[no-untyped-def]
    server, tomori, _ = world
    ids, transport = populate(server, tomori, count)
    prep = prepared([*(user_seed(i) for i in ids), bot_seed()])
    inputs = turn_inputs(tomori)
    with django_assert_max_num_queries(HYDRATION_QUERY_BOUND):
        items = run_with(prep, inputs, transport)
    hydration = items.diagnostics["hydration"]
    assert hydration["profile_count"] == count + 2
    assert hydration["external_calls"]["registrations"] == 1
    # Everyone but the blacklisted user (the newcomer has no memories but is read with the rest).
    assert hydration["external_calls"]["personal_memory_reads"] == count
    text = items.profile.text
    assert f"memory 0 of user{count - 1}" in text
    assert "memory 0 of user0" not in text
    assert '"reminder 9"' in text


def test_h02_two_and_two_hundred_participants_issue_the_same_queries(world):  # type: ignore[no-untyped-def]
    server, tomori, _ = world
    few_ids, few_transport = populate(server, tomori, 2)
    inputs = turn_inputs(tomori)
    counts = []
    with CaptureQueriesContext(connection) as few:
        run_with(prepared([user_seed(i) for i in few_ids]), inputs, few_transport)
    counts.append(len(few.captured_queries))
    m.DiscordUser.objects.all().delete()
    m.PersonalizationBlacklist.objects.all().delete()
    many_ids, many_transport = populate(server, tomori, 200)
    with CaptureQueriesContext(connection) as many:
        run_with(prepared([user_seed(i) for i in many_ids]), inputs, many_transport)
    counts.append(len(many.captured_queries))
    assert counts[0] == counts[1] <= HYDRATION_QUERY_BOUND


def test_t27_h04_registration_in_the_database(world):  # type: ignore[no-untyped-def]
    _, tomori, _ = world
    newcomer, ghost = snowflake(1), snowflake(2)
    transport = FakeTransport(fetchable={newcomer: MemberInfo(newcomer, username="newbie", display_name="Newbie")})
    items = run(prepared([user_seed(newcomer), user_seed(ghost)]), tomori, transport)
    row = m.DiscordUser.objects.get(user_disc_id=newcomer)
    assert (row.username, row.language_pref, row.user_nickname) == ("newbie", "ja", None)
    assert not m.DiscordUser.objects.filter(user_disc_id=ghost).exists()
    assert "\n\nNewbie (" in items.profile.text
    assert transport.fetches == [newcomer, ghost]


def test_t28_h14_memories_by_lineage_from_the_database(world):  # type: ignore[no-untyped-def]
    _, tomori, lilya = world
    alice = m.DiscordUser.objects.create(user_disc_id=snowflake(1), username="alice01", user_nickname="Ally")
    created = {}
    for name, lineage, minutes in (("M2", 0, 1), ("M3", 10002, 2), ("M1", 10001, 3)):
        mem = m.PersonalMemory.objects.create(user=alice, persona_lineage_id=lineage, content=f"content {name}")
        m.PersonalMemory.objects.filter(pk=mem.pk).update(
            created_at=NOW - timedelta(hours=1) + timedelta(minutes=minutes)
        )
        created[name] = mem.personal_memory_id
    m.PersonalMemory.objects.create(user=alice, persona_lineage_id=10099, content="content other lineage")
    transport = FakeTransport(cached={alice.user_disc_id: MemberInfo(alice.user_disc_id, username="alice01")})
    prep = prepared([user_seed(alice.user_disc_id)])
    text = run(prep, tomori, transport).profile.text
    assert f"- Memories: ID:{created['M1']} content M1; ID:{created['M2']} content M2\n" in text
    text = run(prep, lilya, transport).profile.text
    assert f"- Memories: ID:{created['M3']} content M3; ID:{created['M2']} content M2\n" in text
    assert "other lineage" not in text


def test_t32_h15_reminders_from_the_database(world):  # type: ignore[no-untyped-def]
    server, tomori, lilya = world
    alice = m.DiscordUser.objects.create(user_disc_id=snowflake(1), username="alice01")
    rows = [
        ("R1", tomori, 1, "pending"),
        ("R2", None, 2, "pending"),
        ("R3", lilya, 3, "pending"),
        ("R4", tomori, -1, "pending"),
        ("R5", tomori, 4, "fired"),
    ]
    for purpose, persona, hours, status in rows:
        m.Reminder.objects.create(
            server=server,
            channel_disc_id=CHANNEL,
            user_discord_id=alice.user_disc_id,
            reminder_purpose=purpose,
            reminder_time=NOW + timedelta(hours=hours),
            persona=persona,
            status=status,
        )
    transport = FakeTransport(cached={alice.user_disc_id: MemberInfo(alice.user_disc_id, username="alice01")})
    prep = prepared([user_seed(alice.user_disc_id)])

    def purposes(persona):  # type: ignore[no-untyped-def]
        text = run(prep, persona, transport).profile.text
        return [p for p, *_ in rows if f'"{p}"' in text]

    assert purposes(tomori) == ["R1", "R2"]
    assert purposes(lilya) == ["R3"]


def test_t33_h21_self_tasks_from_the_database(world):  # type: ignore[no-untyped-def]
    server, tomori, _ = world
    for purpose, persona, is_self, channel in (
        ("S1", tomori, True, "300000000000000555"),
        ("S2", None, True, CHANNEL),
        ("S3", tomori, False, CHANNEL),
    ):
        m.Reminder.objects.create(
            server=server,
            channel_disc_id=channel,
            user_discord_id=B,
            reminder_purpose=purpose,
            reminder_time=NOW + timedelta(hours=1),
            persona=persona,
            self_reminder=is_self,
        )
    transport = FakeTransport(channels={"300000000000000555": "#tasks"})
    text = run(prepared([bot_seed()]), tomori, transport).profile.text
    assert '"S1" (scheduled for Thu, May 21, 2026, 07:30 PM (UTC+9)) (destination: #tasks)' in text
    assert '"S2"' not in text and '"S3"' not in text
    impersonating = run(prepared([bot_seed()]), tomori, transport, impersonated=snowflake(1)).profile.text
    assert '"S1"' not in impersonating


def test_h06_blacklist_and_privacy_from_the_database(world):  # type: ignore[no-untyped-def]
    server, tomori, _ = world
    full = m.DiscordUser.objects.create(
        user_disc_id=snowflake(1), username="fuller", user_nickname="Hidden-F1", privacy_level=2
    )
    listed = m.DiscordUser.objects.create(user_disc_id=snowflake(2), username="lister", user_nickname="Hidden-B2")
    m.PersonalizationBlacklist.objects.create(server=server, user_disc_id=listed.user_disc_id)
    for user in (full, listed):
        m.PersonalMemory.objects.create(user=user, persona_lineage_id=10001, content=f"secret of {user.username}")
    transport = FakeTransport(
        cached={u.user_disc_id: MemberInfo(u.user_disc_id, username=u.username) for u in (full, listed)}
    )
    snapshot = RequestSnapshot(triggerer_id=snowflake(9), triggerer_row=user_row(full))
    items = run(
        prepared([user_seed(full.user_disc_id), user_seed(listed.user_disc_id)]), tomori, transport, snapshot=snapshot
    )
    text = items.profile.text
    for secret in ("Hidden-F1", "Hidden-B2", "secret of"):
        assert secret not in text
    assert "\n\nFuller (" in text and "\n\nLister (" in text


def turn_reads(server: m.Server, ids: list[str], lineage: int) -> TurnUserReads:
    """What the pipeline's step 10 reads for ``ids`` and hands to hydration."""
    read = load_user_rows_and_blacklist(server.pk, ids, naming_lineages=[lineage])
    pairs = frozenset((row.user_id, lineage) for row in read.rows.values())
    return TurnUserReads(frozenset(ids), read.rows, frozenset(read.blacklisted), pairs, read.preferences)


@pytest.mark.parametrize("count", [2, 200])
def test_h02_the_turns_own_reads_are_not_read_again(world, django_assert_max_num_queries, count):  # type: ignore[no-untyped-def]
    """H-04/H-06/H-09 answered from the turn's earlier reads: the same profiles as reading them afresh,
    with rows, privacy, blacklist and naming preferences not read again."""
    server, tomori, _ = world
    ids, transport = populate(server, tomori, count)
    m.DiscordUser.objects.filter(user_disc_id=ids[1]).update(privacy_level=1)  # PARTIAL: the row's level applies
    prep = prepared([*(user_seed(i) for i in ids), bot_seed()])
    inputs = turn_inputs(tomori)
    reads = turn_reads(server, ids, tomori.persona_lineage_id)
    with django_assert_max_num_queries(HYDRATION_AFTER_TURN_READS_BOUND):
        reused = run_with(prep, inputs, transport, snapshot=RequestSnapshot(turn_reads=reads))
    m.DiscordUser.objects.filter(user_disc_id=ids[-1]).delete()  # registered again by the fresh run
    fresh = run_with(prep, inputs, transport)
    assert reused.profile.text == fresh.profile.text
    assert "Dear" in reused.profile.text
    calls = reused.diagnostics["hydration"]["external_calls"]
    read_again = ("user_row_loads", "privacy_reads", "blacklist_reads")
    assert {name: calls[name] for name in read_again} == dict.fromkeys(read_again, 0)
    assert calls["naming_preference_reads"] == 1  # only the newcomer registered by this run
