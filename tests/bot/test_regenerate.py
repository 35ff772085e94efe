"""The Regenerate button through the real bot (issue 30 item 4; BC9-06, BC9-10): a new reply for the
same trigger replaces the old one, each version keeps its prompt record, and only the asker or a
member with Manage Messages may click it, on the channel's latest reply only."""

from __future__ import annotations

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import backend
from django.contrib.auth import get_user_model
from django.test import AsyncClient
from django.urls import reverse

from bot.discord.exts.regenerate import NOT_ADMITTED, NOT_LATEST, WHO_MAY
from bot.discord.regenerate_button import RegenerateButton
from chatcontext.models import PromptRecord
from chatcontext.records.commands import versions_of
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fakes import FakeInteraction, run_db
from tests.bot.tool_turns import records, sent_messages, setup

pytestmark = pytest.mark.django_db(transaction=True)


def history(channel: discord.TextChannel) -> list[dict]:
    return list(backend._cur_config.messages[channel.id])


def button_of(message_id: int, channel: discord.TextChannel) -> str | None:
    """The custom id of the button the message carries in the channel, if any."""
    data = next(d for d in history(channel) if d["id"] == message_id)
    for row in data.get("components") or []:
        for component in row.get("components", []):
            return component.get("custom_id")
    return None


async def click(harness, member_index: int, message: discord.Message, record_id: int) -> FakeInteraction:
    inter = FakeInteraction(
        user=harness.member(member_index), guild=harness.guild, channel_id=harness.channel.id, message=message
    )
    inter.client = harness.bot  # type: ignore[attr-defined]
    await RegenerateButton(record_id).callback(inter)  # what discord.py calls for the dynamic item
    return inter


async def test_the_asker_regenerates_the_reply_which_is_replaced_and_both_versions_are_recorded(harness, llm_server):
    await setup(harness, llm_server)
    llm_server.reply_text = "first version"
    trigger = await dpytest.message("tomori, tell me a joke", member=harness.member(0))
    [first] = sent_messages()
    [record] = await records()
    assert button_of(first.id, harness.channel) == f"tomori:regenerate:{record.pk}"

    llm_server.reply_text = "second version"
    inter = await click(harness, 0, first, record.pk)

    assert "new version" in inter.reply
    [second] = sent_messages()
    assert second.content == "second version"
    ids = [d["id"] for d in history(harness.channel)]
    assert first.id not in ids and second.id in ids  # replaced, not added
    old, new = await records()
    assert (old.pk, old.reply_text) == (record.pk, "first version")  # the record keeps each version
    assert new.reply_text == "second version" and new.trigger_message_disc_id == str(trigger.id)
    assert new.command == {
        "name": "regenerate",
        "by": str(harness.member(0).id),
        "summary": f"Regenerate: {harness.member(0).name} asked for a new version of the reply of record {record.pk}.",
        "replaces_record": record.pk,
    }
    assert [r.pk for r in await run_db(versions_of, old)] == [old.pk, new.pk]
    # The inspector shows what the command did, and links the reply's versions.
    root = await run_db(get_user_model().objects.create_superuser, "root", password="pw")
    client = AsyncClient()
    await client.aforce_login(root)
    page = (await client.get(reverse("admin:chatcontext_promptrecord_change", args=[new.pk]))).content.decode()
    assert "<th>Command</th>" in page and f"new version of the reply of record {record.pk}." in page
    assert "<th>Reply versions</th>" in page and reverse("admin:chatcontext_promptrecord_change", args=[old.pk]) in page
    assert button_of(second.id, harness.channel) == f"tomori:regenerate:{new.pk}"
    # The first reply's button no longer works: its messages are not the channel's latest turn.
    assert (await click(harness, 0, first, record.pk)).reply == NOT_LATEST


async def test_another_member_is_refused_a_moderator_may(harness, llm_server):
    await setup(harness, llm_server)
    await dpytest.message("tomori, tell me a joke", member=harness.member(0))
    [reply] = sent_messages()
    [record] = await records()

    refused = await click(harness, 1, reply, record.pk)
    assert refused.reply == WHO_MAY.format(name=harness.member(0).display_name)
    assert sent_messages() == [] and await PromptRecord.objects.acount() == 1

    role = dpytest.backend.make_role("Mods", harness.guild, permissions=discord.Permissions(manage_messages=True).value)
    await dpytest.add_role(harness.member(1), role)
    await click(harness, 1, reply, record.pk)
    assert len(sent_messages()) == 1 and await PromptRecord.objects.acount() == 2


async def test_a_reply_before_the_latest_turn_cannot_be_regenerated(harness, llm_server):
    await setup(harness, llm_server)
    await dpytest.message("tomori, first question", member=harness.member(0))
    [earlier] = sent_messages()
    [record] = await records()
    await dpytest.message("tomori, second question", member=harness.member(0))
    sent_messages()

    assert (await click(harness, 0, earlier, record.pk)).reply == NOT_LATEST
    assert await PromptRecord.objects.acount() == 2


async def test_an_asker_who_went_privacy_full_is_not_answered_again(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    await dpytest.message("tomori, tell me a joke", member=ann)
    [reply] = sent_messages()
    [record] = await records()

    def go_full() -> None:
        user = m.DiscordUser.objects.get(user_disc_id=str(ann.id))
        actions.set_privacy_level(user, m.PrivacyLevel.FULL, actor=TEST_ACTOR)

    await run_db(go_full)

    assert (await click(harness, 0, reply, record.pk)).reply == NOT_ADMITTED.format(name=ann.display_name)
    assert await PromptRecord.objects.acount() == 1


async def test_an_alters_webhook_reply_is_regenerated_through_the_webhook(harness, llm_server):
    await setup(harness, llm_server)
    llm_server.reply_text = "ellen's first"
    await dpytest.message("ellen, a poem please", member=harness.member(0))
    hook = harness.webhooks.hooks[harness.channel.id]
    [send] = hook.sends
    [record] = await records()
    assert [item.custom_id for item in send.view.children] == [f"tomori:regenerate:{record.pk}"]

    llm_server.reply_text = "ellen's second"
    await click(harness, 0, hook.messages[0], record.pk)

    assert [s.content for s in hook.standing] == ["ellen's second"] and send.deleted
