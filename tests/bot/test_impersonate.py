"""``/impersonate member [instruction]`` through the real bot (issue 30 item 5; BC7-03/BC7-04): only
for members who opted in with ``/privacy impersonation``, never privacy-Full or blacklisted ones, no
tools offered, posted through the webhook as the member, recorded with what the command did."""

from __future__ import annotations

from types import SimpleNamespace

import discord.ext.test as dpytest
import pytest
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from bot.discord.exts.impersonate import refusal, without_name_prefix
from chatcontext.models import PromptRecord
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fakes import FakeInteraction, run_db
from tests.bot.tool_turns import records, sent_messages, setup
from tests.budgets import database_property

pytestmark = pytest.mark.django_db(transaction=True)


def interaction(harness, member_index: int) -> FakeInteraction:
    return FakeInteraction(user=harness.member(member_index), guild=harness.guild, channel_id=harness.channel.id)


async def impersonate(harness, asker: int, target, instruction: str = "") -> FakeInteraction:
    inter = interaction(harness, asker)
    cog = harness.bot.get_cog("ImpersonateCog")
    await type(cog).impersonate.callback(cog, inter, target, instruction)
    return inter


async def allow(harness, member_index: int, allowed: bool = True) -> str:
    inter = interaction(harness, member_index)
    cog = harness.bot.get_cog("MembersCog")
    await type(cog).privacy.get_command("impersonation").callback(cog, inter, allowed)
    return inter.reply


async def test_impersonation_is_off_until_the_member_turns_it_on_themselves(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)

    refused = await impersonate(harness, 1, ann, "say hi")

    assert "has not allowed impersonation" in refused.reply and "/privacy impersonation" in refused.reply
    assert harness.webhooks.hooks == {} and await records() == []
    assert "may not" in await allow(harness, 0, False)  # the default, said again
    assert "**may**" in await allow(harness, 0, True)
    row = await m.DiscordUser.objects.aget(user_disc_id=str(ann.id))
    assert row.allow_impersonation is True


async def test_an_opted_in_member_is_impersonated_through_the_webhook_without_tools(harness, llm_server):
    await setup(harness, llm_server)
    ann, bob = harness.member(0), harness.member(1)
    await dpytest.message("who wants to play cards tonight?", member=bob)
    await allow(harness, 0)
    llm_server.reply_text = "Ann: count me in, I'll bring snacks!"  # named as the history names her (BC7-07)

    started = await impersonate(harness, 1, ann, "agree to play and offer snacks")

    assert "writing a message as" in started.reply
    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.content == "count me in, I'll bring snacks!"  # without the "Name:" the directive asks for
    assert send.username == ann.display_name and str(send.avatar_url) == ann.display_avatar.url
    assert sent_messages() == []  # nothing posted as the bot itself
    [request] = llm_server.requests
    assert not request.get("tools")  # BC7-04/BC9-01: an impersonation turn offers none
    prompt = str(request["messages"])
    assert "Imitate Ann, start your message with Ann:" in prompt
    assert "agree to play and offer snacks" in prompt
    [record] = await records()
    assert record.command["name"] == "impersonate" and record.command["by"] == str(bob.id)
    assert "agree to play and offer snacks" in record.command["summary"]
    assert record.streaming_context["disable_all_tools"] is True
    assert {str(ann.id), str(bob.id)} <= set(record.subject_user_ids)
    assert record.snapshot["turn"]["impersonated_user_disc_id"] == str(ann.id)


def _full(member_id: int) -> None:
    user = m.DiscordUser.objects.get(user_disc_id=str(member_id))
    actions.set_privacy_level(user, m.PrivacyLevel.FULL, actor=TEST_ACTOR)


def _blacklisted(guild_id: int, member_id: int) -> None:
    server = m.Server.objects.get(server_disc_id=str(guild_id))
    actions.add_to_blacklist(server, str(member_id), actor=TEST_ACTOR)


async def test_privacy_full_blacklisted_and_bot_targets_and_full_askers_are_refused(harness, llm_server):
    await setup(harness, llm_server)
    ann, bob, rei = harness.member(0), harness.member(1), harness.member(2)
    for index in (0, 1, 2):
        await allow(harness, index)

    await run_db(_full, ann.id)
    assert "privacy level is Full" in (await impersonate(harness, 2, ann)).reply
    await run_db(_blacklisted, harness.guild.id, bob.id)
    assert "blacklist" in (await impersonate(harness, 2, bob)).reply
    assert "not bots" in (await impersonate(harness, 2, harness.guild.me)).reply
    # Ann (Full) cannot start a persona turn as anyone either.
    assert "Your privacy level is Full" in (await impersonate(harness, 0, rei)).reply

    assert harness.webhooks.hooks == {} and llm_server.requests == []
    assert await PromptRecord.objects.acount() == 0


def test_the_name_prefix_is_removed_once_and_only_at_the_start():
    assert without_name_prefix("Ann: hi Ann: there", ["Ann"]) == "hi Ann: there"
    assert without_name_prefix("  ann :hello", ["Ann", ""]) == "hello"
    assert without_name_prefix("Annie: hello", ["Ann"]) == "Annie: hello"
    assert without_name_prefix("hello", ["Ann"]) == "hello"


@database_property
@given(
    asker_level=st.sampled_from(list(m.PrivacyLevel)),
    target_level=st.sampled_from(list(m.PrivacyLevel)),
    consent=st.sampled_from([None, False, True]),  # None: the target has no row at all
    blacklisted=st.booleans(),
    bot=st.booleans(),
)
def test_only_a_consenting_not_full_not_blacklisted_person_is_ever_impersonated(
    asker_level, target_level, consent, blacklisted, bot
):
    """The privacy boundary of /impersonate over every combination: refused unless the target is a
    person who allowed it, is not privacy-Full nor blacklisted, and the asker is not privacy-Full."""
    asker = SimpleNamespace(id=1001, name="asker", display_name="Asker", bot=False)
    target = SimpleNamespace(id=1002, name="target", display_name="Target", bot=bot)
    with transaction.atomic():
        server = actions.register_server(
            "4400", name="s", is_dm=False, locale=None, main_persona_nickname="T", actor=TEST_ACTOR
        )
        actions.set_privacy_level(
            actions.register_user("1001", username="asker", global_name=None, actor=TEST_ACTOR),
            asker_level,
            actor=TEST_ACTOR,
        )
        if consent is not None:
            user = actions.register_user("1002", username="target", global_name=None, actor=TEST_ACTOR)
            m.DiscordUser.objects.filter(pk=user.pk).update(privacy_level=target_level, allow_impersonation=consent)
        if blacklisted:
            actions.add_to_blacklist(server, "1002", actor=TEST_ACTOR)
        why = refusal(server.pk, asker, target)
        transaction.set_rollback(True)
    allowed = (
        consent is True
        and not bot
        and target_level != m.PrivacyLevel.FULL
        and not blacklisted
        and asker_level != m.PrivacyLevel.FULL
    )
    assert (why is None) == allowed
