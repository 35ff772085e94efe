"""``manage.py invite_url`` (issue 27 item 4): the bot's invite link from the application id or the token."""

from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import discord
import pytest
from django.core.management import CommandError, call_command

from tests.bot.fake_discord import APPLICATION_ID, TOKEN


def invite(settings, *, token: str = "", application_id: str = "") -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    settings.DISCORD_TOKEN, settings.DISCORD_APPLICATION_ID = token, application_id
    out = io.StringIO()
    call_command("invite_url", stdout=out)
    url = urlsplit(out.getvalue().strip())
    assert (url.scheme, url.netloc, url.path) == ("https", "discord.com", "/oauth2/authorize")
    return parse_qs(url.query)


def test_the_link_asks_for_both_scopes_and_exactly_the_permissions_the_features_use(settings):
    query = invite(settings, token=TOKEN)

    assert query["client_id"] == [APPLICATION_ID]  # read from the token's first segment
    assert query["scope"] == ["bot applications.commands"]
    assert discord.Permissions(int(query["permissions"][0])) == discord.Permissions(
        view_channel=True,
        send_messages=True,
        send_messages_in_threads=True,
        read_message_history=True,
        embed_links=True,
        add_reactions=True,
        use_external_emojis=True,
        manage_webhooks=True,
    )


def test_the_configured_application_id_wins_over_the_token(settings):
    assert invite(settings, token=TOKEN, application_id="987654321098765432")["client_id"] == ["987654321098765432"]


@pytest.mark.parametrize(
    ("token", "application_id", "message"),
    [
        ("", "", "Set DISCORD_APPLICATION_ID"),
        ("not-base64!.x.y", "", "Set DISCORD_APPLICATION_ID"),
        ("aGVsbG8.x.y", "", "Set DISCORD_APPLICATION_ID"),  # base64 of "hello": no id
        (TOKEN, "tomori", "DISCORD_APPLICATION_ID is not a Discord id"),
    ],
)
def test_without_an_id_it_says_what_to_set(settings, token, application_id, message):
    with pytest.raises(CommandError, match=message) as refused:
        invite(settings, token=token, application_id=application_id)
    assert refused.value.returncode == 2
