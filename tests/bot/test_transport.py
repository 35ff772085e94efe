"""DiscordTransport: conversion of live discord.py objects and the sync bridge from the pipeline thread."""

from __future__ import annotations

import discord.ext.test as dpytest
import pytest
from channels.db import database_sync_to_async

from bot.discord.transport import DiscordTransport, to_discord_message
from chatcontext.core.transport import TransportError


def in_pipeline_thread(fn, *args):  # type: ignore[no-untyped-def]
    """Call a transport method the way the pipeline does: synchronously, off the event loop."""
    return database_sync_to_async(fn)(*args)


@pytest.mark.django_db(transaction=True)
async def test_discord_messages_convert_to_the_snapshot_shape(harness):
    ann = harness.member(0)
    message = await dpytest.message(f"hello <@{harness.member(1).id}>", member=ann)

    converted = to_discord_message(message)

    assert converted.id == str(message.id)
    assert converted.channel_id == str(harness.channel.id)
    assert converted.guild_id == str(harness.guild.id)
    assert converted.author.id == str(ann.id) and converted.author.username == "ann"
    assert converted.author.bot is False
    assert converted.member_display_name == ann.display_name
    assert converted.type == "default"
    assert converted.content == message.content
    assert converted.clean_content.startswith("hello @")
    assert converted.created_timestamp == int(message.created_at.timestamp() * 1000)
    assert converted.webhook_id is None and converted.reference is None


@pytest.mark.django_db(transaction=True)
async def test_history_is_read_newest_first_through_the_event_loop_bridge(harness):
    for text in ("one", "two", "three"):
        await dpytest.message(text, member=0)
    trigger = await dpytest.message("four", member=1)
    transport = DiscordTransport(harness.bot, harness.channel, trigger)

    history = await in_pipeline_thread(transport.fetch_history, 3)

    assert [m.content for m in history] == ["four", "three", "two"]
    assert transport.get_cached_message(history[-1].id) == history[-1]
    fetched = await in_pipeline_thread(transport.fetch_message, history[1].id)
    assert fetched.content == "three"


@pytest.mark.django_db(transaction=True)
async def test_missing_messages_raise_transport_errors(harness):
    trigger = await dpytest.message("hi", member=0)
    transport = DiscordTransport(harness.bot, harness.channel, trigger)

    with pytest.raises(TransportError):
        await in_pipeline_thread(transport.fetch_message, "123456789012345678")
    with pytest.raises(TransportError):
        await in_pipeline_thread(transport.fetch_message, "synthetic-user-block-1")
    assert transport.get_cached_member("system-embed") is None


@pytest.mark.django_db(transaction=True)
async def test_members_users_channels_and_roles(harness):
    trigger = await dpytest.message("hi", member=0)
    transport = DiscordTransport(harness.bot, harness.channel, trigger)
    bob = harness.member(1)

    cached = transport.get_cached_member(str(bob.id))
    assert cached is not None and cached.username == "bob" and cached.nickname == bob.nick
    assert cached.presence_status is None  # no presence intent in the tests
    assert str(bob.id) in transport.cached_member_ids()
    assert transport.channel_label(str(harness.channel.id)) == f"#{harness.channel.name}"
    assert transport.role_name(str(harness.guild.default_role.id)) == "@everyone"
    fetched = await in_pipeline_thread(transport.fetch_member, str(bob.id))
    assert fetched is not None and fetched.user_disc_id == str(bob.id)
    user = await in_pipeline_thread(transport.fetch_user, str(bob.id))
    assert user is not None and user.username == "bob"
    assert transport.supports_history and transport.guild_available and not transport.presence_intent
