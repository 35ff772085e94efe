"""Slash-command handlers (issue 6). dpytest cannot deliver interactions, so the command callbacks
are called with a ``FakeInteraction`` carrying dpytest's real guild, members and channel."""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import discord
import discord.ext.test as dpytest
import pytest
from django.utils import timezone

from bot.discord.exts._interactions import MODERATOR_ONLY
from bot.discord.exts.members import EXPORT_NO_DM, EXPORT_SENT
from bot.discord.exts.moderation import PROMPT_COMMAND_OFF, inspector_url
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fakes import FakeInteraction, run_db

pytestmark = pytest.mark.django_db(transaction=True)


def interaction(harness, member_index: int = 0) -> FakeInteraction:
    return FakeInteraction(user=harness.member(member_index), guild=harness.guild, channel_id=harness.channel.id)


async def call(harness, cog_name: str, group: str, command: str, inter: FakeInteraction, *args, **kwargs) -> str:
    cog = harness.bot.get_cog(cog_name)
    cmd = getattr(type(cog), group).get_command(command)
    await cmd.callback(cog, inter, *args, **kwargs)
    return inter.reply


async def make_moderator(harness, member_index: int) -> discord.Member:
    role = dpytest.backend.make_role("Mods", harness.guild, permissions=discord.Permissions(manage_guild=True).value)
    member = harness.member(member_index)
    await dpytest.add_role(member, role)
    return member


def server_rows(guild_id: int) -> tuple[m.Server, m.Persona]:
    server = m.Server.objects.get(server_disc_id=str(guild_id))
    return server, m.Persona.objects.get(server=server, is_alter=False)


async def test_a_member_changes_their_own_privacy_level(harness):
    ann = harness.member(0)

    reply = await call(harness, "MembersCog", "privacy", "set", interaction(harness), int(m.PrivacyLevel.FULL))

    assert "now **Full**" in reply
    user = await m.DiscordUser.objects.aget(user_disc_id=str(ann.id))
    assert user.privacy_level == m.PrivacyLevel.FULL
    assert "**Full**" in await call(harness, "MembersCog", "privacy", "view", interaction(harness))
    bob = await m.DiscordUser.objects.filter(user_disc_id=str(harness.member(1).id)).afirst()
    assert bob is None or bob.privacy_level == m.PrivacyLevel.MINIMAL


async def test_a_member_forgets_one_of_their_memories_but_not_someone_elses(harness):
    ann, bob = harness.member(0), harness.member(1)
    await call(harness, "MembersCog", "privacy", "view", interaction(harness, 1))  # registers Bob
    await call(harness, "MembersCog", "memories", "list", interaction(harness))  # registers the server

    def seed() -> tuple[int, int, int]:
        _, main = server_rows(harness.guild.id)
        ann_row = m.DiscordUser.objects.create(user_disc_id=str(ann.id), username="ann")
        bob_row = m.DiscordUser.objects.get(user_disc_id=str(bob.id))
        lineage = main.persona_lineage_id
        mine = m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=lineage, content="likes tea")
        other_lineage = m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=99999, content="elsewhere")
        bobs = m.PersonalMemory.objects.create(user=bob_row, persona_lineage_id=lineage, content="bob")
        return mine.pk, other_lineage.pk, bobs.pk

    mine, other_lineage, bobs = await run_db(seed)

    listing = await call(harness, "MembersCog", "memories", "list", interaction(harness))
    assert f"`#{mine}` likes tea" in listing
    assert "elsewhere" not in listing and "bob" not in listing

    refused = await call(harness, "MembersCog", "memories", "forget", interaction(harness), bobs)
    assert f"no memory #{bobs}" in refused
    forgot = await call(harness, "MembersCog", "memories", "forget", interaction(harness), mine)
    assert f"forgot memory #{mine}" in forgot

    remaining = {pk async for pk in m.PersonalMemory.objects.values_list("pk", flat=True)}
    assert remaining == {other_lineage, bobs}


async def test_forget_all_clears_the_personas_and_shared_memories_only(harness):
    ann = harness.member(0)
    await call(harness, "MembersCog", "privacy", "view", interaction(harness))  # registers Ann
    await call(harness, "MembersCog", "memories", "list", interaction(harness))  # registers the server

    def seed() -> int:
        _, main = server_rows(harness.guild.id)
        ann_row = m.DiscordUser.objects.get(user_disc_id=str(ann.id))
        m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=main.persona_lineage_id, content="a")
        m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=m.GLOBAL_LINEAGE_ID, content="b")
        return m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=99999, content="c").pk

    kept = await run_db(seed)
    reply = await call(harness, "MembersCog", "memories", "forget_all", interaction(harness))

    assert "forgot 2 memories" in reply
    assert [pk async for pk in m.PersonalMemory.objects.values_list("pk", flat=True)] == [kept]


async def test_a_member_lists_and_cancels_only_their_own_reminders(harness):
    ann, bob = harness.member(0), harness.member(1)
    await call(harness, "MembersCog", "memories", "list", interaction(harness))  # registers the server

    def seed() -> tuple[int, int]:
        server, _ = server_rows(harness.guild.id)
        due = timezone.now() + timedelta(hours=1)
        common = {"server": server, "channel_disc_id": str(harness.channel.id), "reminder_time": due}
        mine = m.Reminder.objects.create(user_discord_id=str(ann.id), reminder_purpose="stretch", **common)
        theirs = m.Reminder.objects.create(user_discord_id=str(bob.id), reminder_purpose="water", **common)
        return mine.pk, theirs.pk

    mine, theirs = await run_db(seed)

    listing = await call(harness, "MembersCog", "reminders", "list", interaction(harness))
    assert f"`#{mine}`" in listing and "stretch" in listing and "water" not in listing
    assert f"no pending reminder #{theirs}" in await call(
        harness, "MembersCog", "reminders", "cancel", interaction(harness), theirs
    )
    assert "cancelled" in await call(harness, "MembersCog", "reminders", "cancel", interaction(harness), mine)
    statuses = {r.pk: r.status async for r in m.Reminder.objects.all()}
    assert statuses == {mine: m.Reminder.Status.CANCELLED, theirs: m.Reminder.Status.PENDING}


async def test_a_non_moderator_is_refused_prompt_last(harness):
    assert not harness.member(0).guild_permissions.manage_guild

    reply = await call(harness, "ModerationCog", "prompt", "last", interaction(harness))

    assert reply == MODERATOR_ONLY
    assert await call(harness, "ModerationCog", "persona", "list", interaction(harness)) == MODERATOR_ONLY


async def test_a_moderator_gets_the_inspector_link_of_the_last_turn(harness):
    await make_moderator(harness, 1)
    listing = await call(harness, "ModerationCog", "persona", "list", interaction(harness, 1))
    assert "**Tomori** (main) — triggers: tomori" in listing
    empty = await call(harness, "ModerationCog", "prompt", "last", interaction(harness, 1))
    assert "No turn has been recorded" in empty

    def seed() -> int:
        server, persona = server_rows(harness.guild.id)
        common = {"server": server, "persona": persona, "channel_disc_id": str(harness.channel.id)}
        PromptRecord.objects.create(created_at=timezone.now() - timedelta(minutes=5), **common)
        return PromptRecord.objects.create(created_at=timezone.now(), **common).pk

    newest = await run_db(seed)
    reply = await call(harness, "ModerationCog", "prompt", "last", interaction(harness, 1))

    assert reply == f"Last turn: {inspector_url(newest)}"
    assert reply.endswith(f"/admin/chatcontext/promptrecord/{newest}/change/")
    shown = await call(harness, "ModerationCog", "persona", "show", interaction(harness, 1), "tomori")
    assert "Lineage:" in shown


async def test_prompt_last_answers_only_where_the_prompt_command_is_on(harness):
    await make_moderator(harness, 1)

    def seed() -> m.ServerSettings:
        server, persona = server_rows(harness.guild.id)
        channel = str(harness.channel.id)
        PromptRecord.objects.create(server=server, persona=persona, channel_disc_id=channel, created_at=timezone.now())
        return server.settings

    last = await call(harness, "ModerationCog", "prompt", "last", interaction(harness, 1))  # registers the server
    assert "No turn has been recorded" in last
    settings = await run_db(seed)
    assert (await call(harness, "ModerationCog", "prompt", "last", interaction(harness, 1))).startswith("Last turn:")
    settings.prompt_snapshot_enabled = False
    await run_db(settings.save)

    assert await call(harness, "ModerationCog", "prompt", "last", interaction(harness, 1)) == PROMPT_COMMAND_OFF


async def test_privacy_export_dms_the_member_a_file_of_everything_the_personas_know(harness):
    ann = harness.member(0)
    await call(harness, "MembersCog", "privacy", "view", interaction(harness))  # registers Ann

    def seed() -> None:
        ann_row = m.DiscordUser.objects.get(user_disc_id=str(ann.id))
        m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=m.GLOBAL_LINEAGE_ID, content="likes tea")
        m.PersonalMemory.objects.create(user=ann_row, persona_lineage_id=99999, content="on another server")

    await run_db(seed)
    await dpytest.empty_queue()
    reply = await call(harness, "MembersCog", "privacy", "export", interaction(harness))

    assert reply == EXPORT_SENT
    dm = dpytest.get_message()
    assert isinstance(dm.channel, discord.DMChannel) and dm.channel == ann.dm_channel
    [attachment] = dm.attachments
    assert attachment.filename == f"tomori-user-{ann.id}.json"
    export = json.loads(await attachment.read())
    assert export["scope"] == "every server" and export["user"]["user_disc_id"] == str(ann.id)
    # Her own export holds her memories of every lineage, not only this server's.
    contents = {memory["content"] for lineage in export["memories"] for memory in lineage["memories"]}
    assert contents == {"likes tea", "on another server"}


async def test_privacy_export_says_so_when_the_member_takes_no_dms(harness, monkeypatch):
    async def closed(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise discord.Forbidden(SimpleNamespace(status=403, reason="Forbidden"), "Cannot send messages to this user")

    monkeypatch.setattr(discord.Member, "send", closed)
    assert await call(harness, "MembersCog", "privacy", "export", interaction(harness)) == EXPORT_NO_DM
