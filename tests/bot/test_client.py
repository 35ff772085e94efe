"""The production client and ``manage.py runbot`` (no Discord connection is made)."""

from __future__ import annotations

import pytest
from discord.ext import commands
from django.core.management import CommandError, call_command

from bot.discord.client import TomoriBot, create_bot, walk_extensions


async def test_the_production_bot_is_auto_sharded_with_the_shard_split_from_settings(settings):
    settings.DISCORD_SHARD_IDS, settings.DISCORD_SHARD_COUNT = [2, 3], 4
    settings.DISCORD_PRESENCE_INTENT = False

    bot = create_bot(sync_commands=False)

    assert isinstance(bot, TomoriBot) and isinstance(bot, commands.AutoShardedBot)
    assert (bot.shard_ids, bot.shard_count) == ([2, 3], 4)
    assert bot.intents.message_content and bot.intents.members and not bot.intents.presences
    assert not bot.allowed_mentions.everyone and not bot.allowed_mentions.roles


def test_every_cog_module_in_exts_is_loaded_and_helpers_are_not():
    assert sorted(walk_extensions()) == [
        "bot.discord.exts.chat",
        "bot.discord.exts.emojis",
        "bot.discord.exts.impersonate",
        "bot.discord.exts.members",
        "bot.discord.exts.moderation",
        "bot.discord.exts.regenerate",
        "bot.discord.exts.reminders",
        "bot.discord.exts.scene",
        "bot.discord.exts.steering",
    ]


def test_runbot_refuses_to_start_without_a_token(settings):
    settings.DISCORD_TOKEN = ""
    with pytest.raises(CommandError, match="DISCORD_TOKEN is not set"):
        call_command("runbot")


def test_runbot_refuses_shard_ids_without_a_shard_count(settings):
    settings.DISCORD_TOKEN, settings.DISCORD_SHARD_IDS, settings.DISCORD_SHARD_COUNT = "token", [0], None
    with pytest.raises(CommandError, match="DISCORD_SHARD_COUNT"):
        call_command("runbot")
