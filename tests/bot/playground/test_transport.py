"""``PlaygroundTransport`` answers the ``ChatTransport`` protocol from the stored channel like
Discord would, with a query count that does not grow with the messages it reads."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bot.playground import store
from bot.playground.models import PlaygroundMessage, allocate_snowflakes
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.transport import TransportError
from chatcontext.core.types import Author, Reaction, ReactionEmoji
from chatcontext.repository import persona_info
from personas.management.commands.load_demo import DEMO_CHANNEL_DISC_ID, DEMO_ROLE_MODERATOR
from personas.models import DiscordUser, ServerMember
from tests.bot.playground.conftest import BOT, JUN, MINA, NOW_MS, REI, Demo

STRANGER = "77"  # a Discord user with a row who is not a member of the demo server
BOT_AUTHOR = Author(id=BOT, username="tomoribot", global_name="Tomori", display_name="Tomori", bot=True)


def say(demo: Demo, author: str, content: str, *, at: int, **kwargs: object) -> PlaygroundMessage:
    return store.store_user_message(demo.channel, author, content, now_ms=NOW_MS + at, **kwargs)  # type: ignore[arg-type]


def transport(demo: Demo) -> PlaygroundTransport:
    return PlaygroundTransport(demo.channel, bot_user=BOT_AUTHOR)


@pytest.mark.django_db
def test_allocated_ids_are_digit_strings_that_grow_with_time_and_never_repeat():
    early = allocate_snowflakes(3, NOW_MS)
    later = allocate_snowflakes(2, NOW_MS + 1)
    same_ms = allocate_snowflakes(2, NOW_MS + 1)

    ids = [*early, *later, *same_ms]
    assert all(i.isdigit() and 17 <= len(i) <= 20 for i in ids)
    assert len(set(ids)) == len(ids)
    assert [int(i) for i in ids] == sorted(int(i) for i in ids)


def test_history_is_newest_first_and_limited(demo):
    messages = [say(demo, MINA if n % 2 else JUN, f"message {n}", at=n) for n in range(6)]

    history = transport(demo).fetch_history(4)

    assert [m.id for m in history] == [m.disc_id for m in reversed(messages[-4:])]
    assert [m.content for m in history] == ["message 5", "message 4", "message 3", "message 2"]
    assert all(m.channel_id == demo.channel.disc_id and m.guild_id == demo.server.server_disc_id for m in history)


def test_history_query_count_does_not_grow_with_messages(demo, django_assert_max_num_queries):
    for n in range(40):
        say(demo, [MINA, JUN, REI, STRANGER][n % 4], f"<@{MINA}> message {n}", at=n)
    DiscordUser.objects.create(user_disc_id=STRANGER, username="stranger")

    with django_assert_max_num_queries(3):  # members, the window, the non-member authors
        history = transport(demo).fetch_history(100)

    assert len(history) == 40


def test_authors_read_like_discord_members_and_users(demo):
    DiscordUser.objects.create(user_disc_id=STRANGER, username="stranger", global_name="Strange One")
    say(demo, MINA, f"hi <@{JUN}>", at=1)
    say(demo, STRANGER, "hello", at=2)
    say(demo, "78", "who am I", at=3)

    unknown, stranger, mina = transport(demo).fetch_history(10)

    assert mina.author == Author(id=MINA, username="mina", global_name="Mina", display_name="Mina")
    assert mina.member_display_name == "Mina-chan"  # the server nickname
    assert mina.clean_content == "hi @Jun"
    assert stranger.author.display_name == "Strange One" and stranger.member_display_name is None
    assert unknown.author.id == "78" and unknown.member_display_name is None


def test_persona_replies_are_the_bots_own_messages_or_the_channel_webhooks(demo):
    trigger = say(demo, MINA, "hi both", at=1)
    tomori = store.bot_identity(demo.server, None)
    main = store.store_bot_message(
        demo.channel, "hello", persona=persona_info(demo.tomori), bot_user=tomori, reply_to=trigger, now_ms=NOW_MS + 2
    )
    alter = store.store_bot_message(
        demo.channel, "squawk", persona=persona_info(demo.pip), bot_user=tomori, reply_to=trigger, now_ms=NOW_MS + 3
    )

    read = transport(demo)
    by_alter, by_main, _ = read.fetch_history(10)

    assert by_main.author == BOT_AUTHOR and by_main.webhook_id is None
    assert by_main.type == "reply" and by_main.reference is not None
    assert by_main.reference.message_id == trigger.disc_id
    assert by_alter.webhook_id == demo.channel.webhook_disc_id and by_alter.author.username == "Pip"
    assert {main.disc_id, alter.disc_id} == {by_main.id, by_alter.id}


def test_fetch_message_reads_this_channel_only(demo):
    mine = say(demo, MINA, "here", at=1)
    other_channel = store.create_channel(demo.server, "elsewhere", now_ms=NOW_MS)
    theirs = store.store_user_message(other_channel, JUN, "there", now_ms=NOW_MS)
    read = transport(demo)

    assert read.fetch_message(mine.disc_id).content == "here"
    assert read.get_cached_message(mine.disc_id) is not None
    with pytest.raises(TransportError):
        read.fetch_message(theirs.disc_id)
    with pytest.raises(TransportError):
        read.fetch_message("123")


def test_reaction_users_are_read_and_remembered_for_the_snapshot(demo):
    message = say(demo, JUN, "owl photo", at=1)
    store.toggle_reaction(message, "🦉", MINA)
    store.toggle_reaction(message, "🦉", REI)
    store.toggle_reaction(message, "👍", MINA)
    store.toggle_reaction(message, "👍", MINA)  # taken back
    read = transport(demo)
    [seen] = read.fetch_history(5)

    assert seen.reactions == (Reaction(emoji=ReactionEmoji(name="🦉"), count=2),)
    users = read.fetch_reaction_users(seen, seen.reactions[0], 1)

    assert [u.id for u in users] == [MINA]
    assert read.reaction_users == {(seen.id, ReactionEmoji(name="🦉")): [MINA]}
    with pytest.raises(TransportError):
        read.fetch_reaction_users(seen, Reaction(emoji=ReactionEmoji(name="👍"), count=1), 5)


def test_members_are_the_servers_member_rows_and_users_fall_back_to_discord_users(demo):
    DiscordUser.objects.create(user_disc_id=STRANGER, username="stranger")
    read = transport(demo)

    assert sorted(read.cached_member_ids()) == sorted(
        ServerMember.objects.filter(server=demo.server).values_list("user_disc_id", flat=True)
    )
    mina = read.get_cached_member(MINA)
    assert mina is not None and mina.display_name == "Mina-chan" and [r.name for r in mina.roles] == ["Regular"]
    assert mina.presence_status == "online"
    assert read.fetch_member(STRANGER) is None
    assert read.fetch_user(STRANGER) == Author(id=STRANGER, username="stranger", display_name="stranger")
    assert read.fetch_user("404") is None
    assert read.members == {MINA: mina}  # what the snapshot will hold: the members the turn read
    assert read.role_name(DEMO_ROLE_MODERATOR) == "Moderator"
    assert read.channel_label(demo.channel.disc_id) == "#lounge" and read.channel_label(DEMO_CHANNEL_DISC_ID) is None


def test_a_dm_server_has_no_guild(demo):
    demo.server.is_dm_channel = True
    demo.server.save()

    read = transport(demo)

    assert not read.guild_available and read.cached_member_ids() == [] and read.get_cached_member(MINA) is None


def test_attachments_reach_the_pipeline_as_file_urls(demo, uploads_dir):
    message = say(demo, MINA, "", at=1, uploads=[SimpleUploadedFile("../../voice note.ogg", b"OggS", "audio/ogg")])
    [attachment] = transport(demo).fetch_message(message.disc_id).attachments

    assert attachment.name == "voice_note.ogg" and attachment.content_type == "audio/ogg" and attachment.size == 4
    assert attachment.url.startswith("file://") and attachment.url.endswith("-voice_note.ogg")
    assert (uploads_dir / message.disc_id).is_dir()  # the name cannot climb out of the upload folder
