"""Custom emojis (issue 30 item 8): the guild's list is synced into the server's rows when the bot is
ready and when the guild's emojis change, and ``:name:`` in a reply becomes the server's markup."""

from __future__ import annotations

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import backend, factories

from bot.conversation.emojis import render_custom_emojis
from chatcontext.core.types import EmojiRow
from personas import models as m
from tests.bot.fakes import run_db, setup_server
from tests.bot.tool_turns import records, sent_messages, use_llm

pytestmark = pytest.mark.django_db(transaction=True)

WAVE = EmojiRow(emoji_disc_id="111111111111111111", emoji_name="blobwave")
DANCE = EmojiRow(emoji_disc_id="222222222222222222", emoji_name="party_dance", is_animated=True)


def test_a_shortcode_naming_a_server_emoji_becomes_its_markup_and_nothing_else_changes():
    text = "hi :blobwave: and :party_dance:! :unknown: <:blobwave:111111111111111111> at 12:30:45, :BLOBWAVE:"
    assert render_custom_emojis(text, [WAVE, DANCE]) == (
        "hi <:blobwave:111111111111111111> and <a:party_dance:222222222222222222>! :unknown: "
        "<:blobwave:111111111111111111> at 12:30:45, :BLOBWAVE:"
    )
    assert render_custom_emojis("hi :blobwave:", None) == "hi :blobwave:"  # emoji usage off: none offered
    assert render_custom_emojis("hi :blobwave:", []) == "hi :blobwave:"


def guild_emoji(guild: discord.Guild, name: str, *, animated: bool = False) -> discord.Emoji:
    data = {"id": factories.make_id(), "name": name, "animated": animated, "require_colons": True}
    return discord.Emoji(guild=guild, state=backend.get_state(), data=data)


async def emoji_rows(guild: discord.Guild) -> list[tuple[str, str, bool]]:
    rows = m.ServerEmoji.objects.filter(server__server_disc_id=str(guild.id)).order_by("emoji_name")
    return [(r.emoji_disc_id, r.emoji_name, r.is_animated) async for r in rows]


async def test_the_emoji_list_follows_the_guild_on_ready_and_on_every_update(harness):
    guild = harness.guild
    await run_db(setup_server, guild)
    wave, dance = guild_emoji(guild, "blobwave"), guild_emoji(guild, "party", animated=True)
    guild.emojis = (wave, dance)  # the guild as the gateway's GUILD_CREATE fills it

    harness.bot.dispatch("ready")
    await dpytest.run_all_events()
    assert await emoji_rows(guild) == [(str(wave.id), "blobwave", False), (str(dance.id), "party", True)]

    # A moderator's description stays with its emoji across a rename.
    await m.ServerEmoji.objects.filter(emoji_disc_id=str(wave.id)).aupdate(emoji_desc="a friendly wave")
    renamed = guild_emoji(guild, "wave", animated=False)
    renamed.id = wave.id
    harness.bot.dispatch("guild_emojis_update", guild, [wave, dance], [renamed])
    await dpytest.run_all_events()

    assert await emoji_rows(guild) == [(str(wave.id), "wave", False)]
    kept = await m.ServerEmoji.objects.aget(emoji_disc_id=str(wave.id))
    assert kept.emoji_desc == "a friendly wave"


async def reply_with_the_wave(harness, llm_server, reply_text: str, **settings: object) -> discord.Emoji:
    """A server whose guild has the emoji ``blobwave`` (synced by an emoji update), answering a
    trigger with ``reply_text``."""
    guild = harness.guild
    await run_db(setup_server, guild)
    await run_db(use_llm, guild.id, llm_server, **settings)
    wave = guild_emoji(guild, "blobwave")
    harness.bot.dispatch("guild_emojis_update", guild, [], [wave])
    await dpytest.run_all_events()
    llm_server.reply_text = reply_text
    await dpytest.message("tomori, hello!", member=harness.member(0))
    return wave


async def test_a_reply_shortcode_is_posted_and_recorded_as_the_servers_emoji(harness, llm_server):
    wave = await reply_with_the_wave(harness, llm_server, "Good evening :blobwave: :nosuch:")

    [reply] = sent_messages()
    assert reply.content == f"Good evening <:blobwave:{wave.id}> :nosuch:"
    [record] = await records()
    assert record.reply_text == reply.content
    # The persona was offered the emoji it used (BC7-08), by its name only.
    assert "- :blobwave:" in str(llm_server.requests[0]["messages"])


async def test_with_emoji_usage_off_a_shortcode_stays_text(harness, llm_server):
    await reply_with_the_wave(harness, llm_server, "Good evening :blobwave:", emoji_usage_enabled=False)

    [reply] = sent_messages()
    assert reply.content == "Good evening :blobwave:"
