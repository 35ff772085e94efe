"""The stage's plain-SQL reads (chatcontext/sql.py) return what the ORM would, on SQLite and on
PostgreSQL: column names, JSON and boolean columns, datetime columns and datetime parameters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from chatcontext import repository, sql
from chatcontext.core.types import BlockRow, MemoryRow, ServerMemoryRow
from chatcontext.participants.loaders import DatabaseHydrationDeps, LineageMemories, MemoryQuery, ReminderQuery
from personas import models as m

NOW = datetime(2026, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
NOW_MS = repository.datetime_to_ms(NOW)
BOT = "900000000000000001"


def test_names_map_fields_and_foreign_key_attributes_to_quoted_columns():
    memories = sql.names(m.PersonalMemory)
    assert memories.table == '"personal_memories"'
    assert memories["user"] == memories["user_id"] == '"user_id"'
    assert memories.columns("content", "tags", alias="p") == 'p."content", p."tags"'
    with pytest.raises(KeyError):
        memories["no_such_field"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[]", ()),
        ('["cats", 7]', ("cats", "7")),
        (["dogs"], ("dogs",)),
        ('{"a": 1}', None),
        ('"cats"', None),
        (None, None),
    ],
)
def test_string_list_reads_json_text_or_decoded_lists(value, expected):
    assert sql.string_list(value) == expected


@pytest.mark.django_db
@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)))
def test_epoch_us_reads_a_stored_datetime_as_its_exact_microseconds(when):
    """Whole microseconds on either database (whole seconds too, which SQLite stores without a
    fraction), and in milliseconds what ``repository.datetime_to_ms`` gives."""
    server = m.Server.objects.get_or_create(server_disc_id="200000000000000001")[0]
    memory = m.ServerMemory.objects.create(server=server, persona_lineage_id=0, content="x")
    m.ServerMemory.objects.filter(pk=memory.pk).update(created_at=when)
    s = sql.names(m.ServerMemory)
    [(value,)] = sql.fetch(
        m.ServerMemory,
        f"SELECT {sql.epoch_us(m.ServerMemory, s['created_at'])} FROM {s.table} WHERE {s['id']} = %s",
        [memory.pk],
    )
    assert value == (when - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert sql.us_to_ms(value) == repository.datetime_to_ms(when)
    memory.delete()


@pytest.mark.django_db
def test_user_rows_equal_the_orm_rows():
    users = [
        m.DiscordUser.objects.create(
            user_disc_id="100000000000000001",
            username="alice",
            physical_appearance_tags=["red scarf", "tall"],
            shortterm_cache_crossserver_opt_in=True,
            timezone_offset=-5,
            privacy_level=1,
        ),
        m.DiscordUser.objects.create(user_disc_id="100000000000000002", username="bob", user_nickname="Bobby"),
    ]
    rows = repository.load_user_rows([u.user_disc_id for u in users] + ["100000000000000003"])
    assert rows == {u.user_disc_id: repository.user_row(u) for u in users}
    assert rows["100000000000000001"].shortterm_cache_crossserver_opt_in is True
    assert rows["100000000000000002"].shortterm_cache_crossserver_opt_in is False


@pytest.mark.django_db
def test_user_rows_with_blacklist_equal_the_two_separate_reads():
    """One statement for both, blacklisted ids without a user row included; another server's entry
    does not count."""
    here = m.Server.objects.create(server_disc_id="800000000000000001")
    elsewhere = m.Server.objects.create(server_disc_id="800000000000000002")
    for n in (1, 2, 3):
        m.DiscordUser.objects.create(user_disc_id=f"10000000000000000{n}", username=f"u{n}", privacy_level=n % 3)
    for server, n in ((here, 1), (here, 4), (elsewhere, 2)):
        m.PersonalizationBlacklist.objects.create(server=server, user_disc_id=f"10000000000000000{n}")
    ids = [f"10000000000000000{n}" for n in (1, 2, 3, 4, 5)]
    users = {u.user_disc_id: u for u in m.DiscordUser.objects.all()}
    m.UserPersonaNamingPreference.objects.create(user=users[ids[0]], persona_lineage_id=7, prefix_override="Dear")
    m.UserPersonaNamingPreference.objects.create(user=users[ids[0]], persona_lineage_id=8, nickname_override="")
    m.UserPersonaNamingPreference.objects.create(user=users[ids[1]], persona_lineage_id=9, nickname_override="Bo")
    read = repository.load_user_rows_and_blacklist(here.pk, ids, naming_lineages=[7, 8])
    assert read.rows == repository.load_user_rows(ids)
    assert read.blacklisted == repository.load_blacklisted(here.pk, ids) == {ids[0], ids[3]}
    pairs = [(row.user_id, lineage) for row in read.rows.values() for lineage in (7, 8)]
    assert read.preferences == DatabaseHydrationDeps(None).load_naming_preferences(pairs)  # type: ignore[arg-type]
    assert set(read.preferences) == {(users[ids[0]].user_id, 7), (users[ids[0]].user_id, 8)}
    without_server = repository.load_user_rows_and_blacklist(None, ids)
    assert (without_server.rows, without_server.blacklisted, without_server.preferences) == (read.rows, set(), {})


@pytest.mark.django_db
def test_datetime_parameters_compare_like_the_orm():
    server = m.Server.objects.create(server_disc_id="200000000000000001", name="Cafe")
    persona = m.Persona.objects.create(server=server, persona_nickname="Tomori")
    for disc_id, expires in (
        ("100000000000000001", NOW + timedelta(milliseconds=1)),
        ("100000000000000002", NOW),
        ("100000000000000003", NOW - timedelta(hours=1)),
    ):
        m.PersonaUserBlock.objects.create(
            server=server, persona=persona, user_disc_id=disc_id, reason="spam", expires_at=expires
        )
    active = repository.load_blocks_and_sprite_labels(server.server_id, persona.persona_id, NOW_MS, ()).active_blocks
    orm = m.PersonaUserBlock.objects.filter(server=server, persona=persona, expires_at__gt=NOW)
    assert [b.user_disc_id for b in active] == [b.user_disc_id for b in orm.order_by("id")] == ["100000000000000001"]
    assert active == [BlockRow("100000000000000001", "block", NOW_MS + 1, persona.persona_id, "spam")]


@pytest.mark.django_db
def test_blocks_and_sprite_labels_in_one_statement_each_part_alone_or_together():
    """BC2-07 blocks (creation order, this persona only) and BC3-10 sprite labels share one read;
    without persona ids only the labels are read, without message ids only the blocks."""
    server = m.Server.objects.create(server_disc_id="200000000000000001", name="Cafe")
    persona = m.Persona.objects.create(server=server, persona_nickname="Tomori")
    other = m.Persona.objects.create(server=server, persona_nickname="Lilya", is_alter=True)
    for disc_id, owner, kind in (
        ("100000000000000002", persona, "mute"),
        ("100000000000000001", persona, "block"),
        ("100000000000000003", other, "block"),
    ):
        m.PersonaUserBlock.objects.create(
            server=server, persona=owner, user_disc_id=disc_id, block_type=kind, reason="r", expires_at=NOW
        )
    for message_id, owner, sprite in (("500000000000000001", persona, "smile"), ("500000000000000002", other, "wave")):
        m.PersonaSpriteMessage.objects.create(
            message_disc_id=message_id, persona=owner, sprite_name=sprite, channel_disc_id="300000000000000001"
        )
    messages = ["500000000000000001", "500000000000000002", "500000000000000009"]
    both = repository.load_blocks_and_sprite_labels(server.server_id, persona.persona_id, NOW_MS - 1, messages)
    assert [(b.user_disc_id, b.block_type) for b in both.active_blocks] == [
        ("100000000000000002", "mute"),
        ("100000000000000001", "block"),
    ]
    labels = {"500000000000000001": (persona.persona_id, "smile"), "500000000000000002": (other.persona_id, "wave")}
    assert both.sprite_labels == labels
    assert repository.load_blocks_and_sprite_labels(None, None, NOW_MS - 1, messages) == (
        repository.BlocksAndSprites([], labels)
    )
    blocks_only = repository.load_blocks_and_sprite_labels(server.server_id, persona.persona_id, NOW_MS - 1, ())
    assert blocks_only == repository.BlocksAndSprites(both.active_blocks, {})


@pytest.mark.django_db
def test_personal_memories_newest_first_with_tags_and_invalid_rows_skipped():
    user = m.DiscordUser.objects.create(user_disc_id="100000000000000001", username="alice")
    older = m.PersonalMemory.objects.create(user=user, persona_lineage_id=10001, content="likes tea", tags=["tea"])
    newer = m.PersonalMemory.objects.create(user=user, persona_lineage_id=0, content="plays go")
    m.PersonalMemory.objects.create(user=user, persona_lineage_id=10002, content="other lineage")
    m.PersonalMemory.objects.create(user=user, persona_lineage_id=10001, content="bad tags", tags={"not": "a list"})
    m.PersonalMemory.objects.filter(pk=older.pk).update(created_at=NOW - timedelta(days=1))
    m.PersonalMemory.objects.filter(pk=newer.pk).update(created_at=NOW)
    m.PersonalMemory.objects.filter(content="bad tags").update(created_at=NOW - timedelta(days=2))

    deps = DatabaseHydrationDeps(transport=None)  # type: ignore[arg-type]
    memories = deps.load_memories(MemoryQuery((user.user_id,), 10001))

    assert memories == LineageMemories(
        {
            user.user_id: [
                MemoryRow(newer.pk, user.user_id, 0, "plays go", (), NOW_MS),
                MemoryRow(older.pk, user.user_id, 10001, "likes tea", ("tea",), NOW_MS - 86_400_000),
            ]
        }
    )


@pytest.mark.django_db
def test_personal_and_server_memories_in_one_statement_equal_the_separate_reads():
    """The lineage's server memories (plus lineage 0, newest first) come with the personal ones, as
    ``load_server_memories`` reads them alone; without users only the server memories are read."""
    server = m.Server.objects.create(server_disc_id="200000000000000001", name="Cafe")
    user = m.DiscordUser.objects.create(user_disc_id="100000000000000001", username="alice")
    mine = m.PersonalMemory.objects.create(user=user, persona_lineage_id=10001, content="likes tea", tags=["tea"])
    for lineage, content, age in ((10001, "the cafe opens at 9", 2), (0, "cats welcome", 1), (10002, "other", 0)):
        row = m.ServerMemory.objects.create(server=server, persona_lineage_id=lineage, content=content, tags=["x"])
        m.ServerMemory.objects.filter(pk=row.pk).update(created_at=NOW - timedelta(days=age))
    deps = DatabaseHydrationDeps(transport=None)  # type: ignore[arg-type]
    with CaptureQueriesContext(connection) as captured:
        both = deps.load_memories(MemoryQuery((user.user_id,), 10001, server.server_id))
    assert len(captured.captured_queries) == 1
    alone = repository.load_server_memories(server.server_id, 10001)
    assert [s.content for s in alone] == ["cats welcome", "the cafe opens at 9"]
    assert alone[0] == ServerMemoryRow(0, "cats welcome", ("x",), NOW_MS - 86_400_000)
    personal_alone = deps.load_memories(MemoryQuery((user.user_id,), 10001))
    assert both == LineageMemories(personal_alone.personal, alone)
    assert [row.personal_memory_id for row in both.personal[user.user_id]] == [mine.pk]
    assert deps.load_memories(MemoryQuery((), 10001, server.server_id)) == LineageMemories({}, alone)


@pytest.mark.django_db
@pytest.mark.parametrize("humans", [(), ("100000000000000001",)])
def test_reminder_read_with_or_without_human_targets(humans):
    server = m.Server.objects.create(server_disc_id="200000000000000001", name="Cafe")
    persona = m.Persona.objects.create(server=server, persona_nickname="Tomori")
    common = {"server": server, "channel_disc_id": "300000000000000001", "reminder_time": NOW + timedelta(hours=1)}
    human = m.Reminder.objects.create(user_discord_id="100000000000000001", reminder_purpose="stretch", **common)
    task = m.Reminder.objects.create(
        user_discord_id=BOT, reminder_purpose="water the plants", self_reminder=True, persona=persona, **common
    )
    m.Reminder.objects.create(user_discord_id=BOT, reminder_purpose="not a self-task", persona=persona, **common)

    rows = DatabaseHydrationDeps(transport=None).load_reminders(  # type: ignore[arg-type]
        ReminderQuery(server.server_id, humans, persona.persona_id, True, BOT, NOW_MS)
    )

    expected = [human.reminder_id, task.reminder_id] if humans else [task.reminder_id]
    assert [r.reminder_id for r in rows] == expected
    assert rows[-1].self_reminder is True
    assert rows[-1].reminder_time_ms == NOW_MS + 3_600_000
