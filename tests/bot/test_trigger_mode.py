"""Deliberate Trigger Mode through the real bot (issue 30 item 7): the server's mode, the member's
personal mode over it, and the explicit signals (@name, mention, reply) that trigger under either."""

from __future__ import annotations

import discord.ext.test as dpytest
import pytest

from chatcontext.models import PromptRecord
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fakes import run_db, setup_server

pytestmark = pytest.mark.django_db(transaction=True)


def deliberate_server(guild, *, personal: dict[int, str] | None = None) -> None:
    setup_server(guild)
    m.ServerSettings.objects.filter(server__server_disc_id=str(guild.id)).update(deliberate_trigger_mode=True)
    for member_id, mode in (personal or {}).items():
        user = actions.register_user(str(member_id), username="member", global_name=None, actor=TEST_ACTOR)
        m.DiscordUser.objects.filter(pk=user.pk).update(personal_dtm=mode)


async def answered_by() -> list[str]:
    return [r.persona_nickname async for r in PromptRecord.objects.order_by("id")]


async def test_under_the_server_mode_a_trigger_word_is_silent_and_an_at_name_is_answered(harness):
    await run_db(deliberate_server, harness.guild)

    await dpytest.message("tomori, are you there?", member=harness.member(0))
    assert await answered_by() == []

    await dpytest.message("@tomori hi", member=harness.member(0))
    await dpytest.message("and you @Ellen?", member=harness.member(0))
    await dpytest.message(f"<@{harness.bot.user.id}> still up?", member=harness.member(0))
    assert await answered_by() == ["Tomori", "Ellen", "Tomori"]


async def test_a_members_personal_mode_overrides_the_servers(harness):
    ann, bob = harness.member(0), harness.member(1)
    await run_db(deliberate_server, harness.guild, personal={ann.id: "off"})

    await dpytest.message("tomori, are you there?", member=bob)  # follows the server: deliberate
    assert await answered_by() == []
    await dpytest.message("tomori, are you there?", member=ann)  # personal off: trigger words count
    assert await answered_by() == ["Tomori"]


async def test_a_personal_on_makes_trigger_words_silent_on_a_server_without_the_mode(harness):
    ann = harness.member(0)

    def personal_on() -> None:
        setup_server(harness.guild)
        user = actions.register_user(str(ann.id), username="ann", global_name=None, actor=TEST_ACTOR)
        m.DiscordUser.objects.filter(pk=user.pk).update(personal_dtm="on")

    await run_db(personal_on)

    await dpytest.message("ellen, what do you think?", member=ann)
    assert await answered_by() == []
    await dpytest.message("ellen, what do you think?", member=harness.member(1))
    assert await answered_by() == ["Ellen"]
