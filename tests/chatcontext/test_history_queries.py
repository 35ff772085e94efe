"""Database access of the history: one batched query per kind of row, whatever the window size."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.memory_transport import InMemoryTransport
from chatcontext.core.types import (
    Attachment,
    Author,
    DiscordMessage,
    ForwardSnapshot,
    MessageReference,
    Reaction,
    ReactionEmoji,
)
from chatcontext.history import build_history
from chatcontext.voice.cache import DatabaseTranscriptCache
from personas import models as m
from tests.chatcontext.builders import NOW, SERVER, make_turn, msg, webhook_msg

MAX_QUERIES = 6  # users and reactors with blacklist entries, blocks, sprites, transcripts (+ evicting expired ones)


def _user(index: int) -> Author:
    return Author(id=f"{100000000000000000 + index}", username=f"user{index}", global_name=f"User {index}")


def _world() -> tuple[m.Server, m.Persona, m.Persona]:
    server = m.Server.objects.create(server_disc_id=SERVER.server_disc_id, name="Cafe")
    tomori = m.Persona.objects.create(server=server, persona_nickname="Tomori")
    ellen = m.Persona.objects.create(server=server, persona_nickname="Ellen", is_alter=True)
    for index in range(12):
        user = _user(index)
        m.DiscordUser.objects.create(
            user_disc_id=user.id,
            username=user.username,
            user_nickname=f"Nick {index}",
            privacy_level=2 if index == 3 else 0,
        )
    m.PersonalizationBlacklist.objects.create(server=server, user_disc_id=_user(4).id)
    m.PersonaUserBlock.objects.create(
        server=server,
        persona=tomori,
        user_disc_id=_user(5).id,
        block_type="block",
        reason="spam",
        expires_at=repository.ms_to_datetime(NOW) + timedelta(minutes=90),
    )
    return server, tomori, ellen


def _channel(count: int) -> tuple[list[DiscordMessage], list[DiscordMessage]]:
    messages: list[DiscordMessage] = []
    extras: list[DiscordMessage] = []
    for index in range(count):
        author = _user(index % 12)
        if index % 10 == 9:
            messages.append(webhook_msg(f"h{index}", "Ellen", f"persona line {index}"))
            continue
        reply_to = None
        if index % 7 == 0:
            extras.append(msg(f"x{index}", _user((index + 1) % 12), f"old {index}"))
            reply_to = f"x{index}"
        reactions = (Reaction(ReactionEmoji(name="👍"), 1, users=(_user(20).id,)),) if index % 5 == 0 else ()
        attachments = (
            (Attachment(id=f"a{index}", name="v.ogg", url="https://cdn.example/v.ogg", content_type="audio/ogg"),)
            if index % 6 == 0
            else ()
        )
        messages.append(
            msg(f"m{index}", author, f"text {index}", reply_to=reply_to, reactions=reactions, attachments=attachments)
        )
    return messages, extras


def _build(
    count: int, tomori: m.Persona, ellen: m.Persona, server: m.Server, assert_max
) -> tuple[int, list[str | None]]:  # type: ignore[no-untyped-def]
    messages, extras = _channel(count)
    tomori_info = repository.persona_info(tomori)
    turn = make_turn(
        messages[-1],
        persona=tomori_info,
        personas=(tomori_info, repository.persona_info(ellen)),
        server=repository.server_config(server),
    )
    transport = InMemoryTransport(messages, extra_messages=extras, users=tuple(_user(i) for i in (*range(12), 20)))
    with assert_max(MAX_QUERIES), CaptureQueriesContext(connection) as queries:
        result = build_history(
            turn, transport, MessageIdMap(), config=StageConfig(), transcripts=DatabaseTranscriptCache()
        )
    return len(queries.captured_queries), [e.content for e in result.simplified_messages]


@pytest.mark.django_db
def test_query_count_is_bounded_and_independent_of_the_window(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    server, tomori, ellen = _world()
    small, small_contents = _build(10, tomori, ellen, server, django_assert_max_num_queries)
    large, large_contents = _build(100, tomori, ellen, server, django_assert_max_num_queries)
    assert small == large
    # The rows were really used: FULL user 3 and blocked user 5 are absent, nicknames applied.
    text = "\n".join(c or "" for c in large_contents)
    lines = set(text.split("\n"))
    hidden = {f"text {i}" for i in range(100) if i % 12 in (3, 5)}
    assert not lines & hidden
    assert "text 96" in text
    assert "blocked by you for 2 more hours" in text
    assert "by Nick 11 saying: old 70" in text
    assert len(small_contents) < len(large_contents)


@pytest.mark.django_db
def test_db_rows_feed_privacy_blacklist_and_sprites() -> None:
    server, tomori, ellen = _world()
    m.PersonaSpriteMessage.objects.create(message_disc_id="h1", persona=ellen, sprite_name="smug", channel_disc_id="c")
    hidden = _user(40)  # privacy FULL and never an author of the window
    m.DiscordUser.objects.create(user_disc_id=hidden.id, username=hidden.username, privacy_level=2)
    intermediate = msg(
        "mid",
        _user(1),
        reference=MessageReference(type="forward", message_id="o"),
        message_snapshots=(ForwardSnapshot(content="chain secret", author=hidden),),
    )
    nested = msg(
        "w1",
        _user(1),
        "fwd",
        reference=MessageReference(type="forward", message_id="mid"),
        message_snapshots=(ForwardSnapshot(),),
    )
    messages = [
        nested,
        msg("m0", _user(0), "q"),
        msg("m1", _user(4), "a", reply_to="m0"),
        msg("m2", _user(3), "full secret"),
        msg("m3", _user(0), "reply", reply_to="m1"),
        webhook_msg("h1", "Ellen", "hi"),
    ]
    tomori_info = repository.persona_info(tomori)
    turn = make_turn(
        messages[-1],
        persona=tomori_info,
        personas=(tomori_info, repository.persona_info(ellen)),
        server=repository.server_config(server),
    )
    result = build_history(
        turn,
        InMemoryTransport(messages, extra_messages=(intermediate,)),
        MessageIdMap(),
        config=StageConfig(),
        transcripts=DatabaseTranscriptCache(),
    )
    contents = [e.content or "" for e in result.simplified_messages]
    assert not any("full secret" in c or "chain secret" in c for c in contents)
    assert contents[0] == "fwd"
    contents = contents[1:]
    # User 4 is blacklisted: the saved nickname is not used, the live name is.
    assert contents[1].startswith("[System: This message (ID: ref_1) by User 4 is referring")
    assert "by Nick 0 saying: q]" in contents[1]
    assert result.simplified_messages[-1].author_name == "Ellen (smug)"
