"""The playground's pages and endpoints are staff-only and scoped like the inspector: a non-staff
account is sent to the admin login; a moderator of another server gets a 404 for everything of a
server they do not moderate; the demo server's moderator can use all of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from bot.playground import store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.service import send_playground_message
from chatcontext.models import PromptRecord
from personas.models import Server, ServerModerator
from tests.bot.image_server import png_bytes
from tests.bot.playground.conftest import BOT, MINA, NOW_MS, REI, Demo

pytestmark = pytest.mark.django_db


@dataclass
class People:
    demo: Demo
    other: Server
    other_channel: PlaygroundChannel
    record: PromptRecord
    message: PlaygroundMessage  # Mina's, with a photo

    def client(self, username: str) -> Client:
        client = Client()
        client.force_login(get_user_model().objects.get(username=username))
        return client


@pytest.fixture
def people(demo: Demo) -> People:
    other = Server.objects.create(server_disc_id="4300", name="Day Larks")
    other_channel = store.create_channel(other, "porch", now_ms=NOW_MS)
    User = get_user_model()
    alice = User.objects.create_user("alice", password="pw", is_staff=True)
    bob = User.objects.create_user("bob", password="pw", is_staff=True)
    User.objects.create_user("charlie", password="pw")
    User.objects.create_superuser("root", password="pw")
    ServerModerator.objects.create(server=demo.server, user=alice)
    ServerModerator.objects.create(server=other, user=bob)
    photo = SimpleUploadedFile("owl.png", png_bytes(), "image/png")
    [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} look", attachments=[photo])
    message = PlaygroundMessage.objects.get(disc_id=record.trigger_message_disc_id)
    return People(demo=demo, other=other, other_channel=other_channel, record=record, message=message)


def demo_urls(p: People) -> list[tuple[str, str, dict[str, Any]]]:
    """Every endpoint, aimed at the demo server's objects."""
    channel = p.demo.channel.pk
    return [
        ("get", f"{reverse('playground:index')}?server={p.demo.server.pk}", {}),
        ("get", f"{reverse('playground:index')}?server={p.demo.server.pk}&channel={channel}", {}),
        ("post", reverse("playground:create_channel", args=[p.demo.server.pk]), {"name": "intruders"}),
        ("post", reverse("playground:send_message", args=[channel]), {"identity": MINA, "content": "tomori, hi"}),
        ("post", reverse("playground:react", args=[channel, p.message.disc_id]), {"identity": MINA, "emoji": "👍"}),
        ("get", reverse("playground:record_panel", args=[p.record.pk]), {}),
        ("get", reverse("playground:attachment", args=[p.message.disc_id, p.message.attachments[0]["id"]]), {}),
        ("get", reverse("playground:message", args=[p.message.disc_id]), {}),
        # Mina's message is no persona reply: the moderator is refused with 400, a stranger never gets that far.
        ("post", reverse("playground:regenerate", args=[channel, p.message.disc_id]), {"identity": MINA}),
    ]


def test_anonymous_and_non_staff_accounts_are_sent_to_the_admin_login(people):
    before = PlaygroundMessage.objects.count()
    for client in (Client(), people.client("charlie")):
        for method, url, data in demo_urls(people):
            response = getattr(client, method)(url, data)
            assert response.status_code == 302, url
            assert response["Location"].startswith(reverse("admin:login")), url
    assert PlaygroundMessage.objects.count() == before
    assert not PlaygroundChannel.objects.filter(name="intruders").exists()


def test_a_moderator_of_another_server_gets_404_for_everything_of_the_demo_server(people):
    bob = people.client("bob")
    before = PlaygroundMessage.objects.count(), PlaygroundChannel.objects.count()

    for method, url, data in demo_urls(people):
        assert getattr(bob, method)(url, data).status_code == 404, url

    assert (PlaygroundMessage.objects.count(), PlaygroundChannel.objects.count()) == before
    assert people.message.reactions == [] and PlaygroundMessage.objects.get(pk=people.message.pk).reactions == []
    page = bob.get(reverse("playground:index"))
    assert page.status_code == 200
    assert [s.name for s in page.context["servers"]] == ["Day Larks"]
    assert b"Night Owls Demo" not in page.content


def test_the_demo_servers_moderator_uses_every_endpoint(people):
    alice = people.client("alice")
    statuses = {url: getattr(alice, method)(url, data).status_code for method, url, data in demo_urls(people)}

    assert [statuses[url] for _, url, _ in demo_urls(people)] == [200, 200, 302, 200, 200, 200, 200, 302, 400]
    assert PlaygroundChannel.objects.filter(server=people.demo.server, name="intruders").exists()


def test_a_superuser_sees_every_server(people):
    page = people.client("root").get(reverse("playground:index"))

    assert {s.name for s in page.context["servers"]} == {"Day Larks", "Night Owls Demo"}


def test_the_page_offers_identities_with_their_privacy_the_personas_and_the_echo_banner(people):
    demo = people.demo
    page = people.client("alice").get(f"{reverse('playground:index')}?server={demo.server.pk}")

    html = page.content.decode()
    assert "No LLM provider configured — the offline echo provider answers" in html
    assert "Mina-chan (@mina) — privacy MINIMAL" in html and "Rei (@rei) — privacy FULL" in html
    assert "tomoribot" not in html  # bots are no identity
    assert [p.persona_nickname for p in page.context["personas"]] == ["Tomori", "Pip"]
    assert [m["id"] for m in page.context["chat_messages"]] == list(
        PlaygroundMessage.objects.filter(channel=demo.channel).values_list("disc_id", flat=True)
    )
    assert page.context["record"] == people.record  # the latest turn's prompt panel
    assert 'class="prompt-block"' in html and "knowledge_users_in_conversation" in html
    assert reverse("playground:index") in people.client("alice").get(reverse("admin:index")).content.decode()


def test_no_echo_banner_when_a_provider_is_configured(people, settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "some-model"

    page = people.client("alice").get(f"{reverse('playground:index')}?server={people.demo.server.pk}")

    assert b"No LLM provider configured" not in page.content


def test_sending_answers_with_the_stored_messages_the_records_and_why_nothing_answered(people):
    alice = people.client("alice")
    url = reverse("playground:send_message", args=[people.demo.channel.pk])

    answered = alice.post(url, {"identity": MINA, "content": "tomori, what's new?"}).json()
    refused = alice.post(url, {"identity": REI, "content": "tomori, psst"}).json()

    assert answered["skip"] is None and [m["kind"] for m in answered["messages"]] == ["user", "persona"]
    [summary] = answered["records"]
    assert summary["persona"] == "Tomori" and summary["error"] == ""
    panel = alice.get(summary["panel_url"]).content.decode()
    assert "Prompt of Tomori" in panel and "what&#x27;s new?" in panel and "Pronouns: she/her" in panel
    assert refused["skip"] == "privacy_full" and refused["records"] == []
    assert [m["author_name"] for m in refused["messages"]] == ["Rei"]


def test_sending_refuses_a_stranger_identity_a_foreign_reply_target_and_an_empty_message(people):
    alice = people.client("alice")
    url = reverse("playground:send_message", args=[people.demo.channel.pk])
    elsewhere = store.store_user_message(people.other_channel, MINA, "on the porch", now_ms=NOW_MS)

    stranger = alice.post(url, {"identity": BOT, "content": "tomori, I am the bot"})  # a bot, no identity
    foreign = alice.post(url, {"identity": MINA, "content": "tomori, hi", "reply_to": elsewhere.disc_id})
    empty = alice.post(url, {"identity": MINA, "content": "   "})

    assert [r.status_code for r in (stranger, foreign, empty)] == [400, 400, 400]
    assert all("error" in r.json() for r in (stranger, foreign, empty))


def test_reactions_toggle_for_the_chosen_identity(people):
    alice = people.client("alice")
    url = reverse("playground:react", args=[people.demo.channel.pk, people.message.disc_id])

    added = alice.post(url, {"identity": REI, "emoji": "🦉"}).json()["message"]
    removed = alice.post(url, {"identity": REI, "emoji": "🦉"}).json()["message"]

    assert added["reactions"] == [{"emoji": "🦉", "users": [REI]}] and removed["reactions"] == []


def test_an_image_attachment_is_served_inline_as_the_type_of_its_bytes(people):
    [attachment] = people.message.attachments
    url = reverse("playground:attachment", args=[people.message.disc_id, attachment["id"]])

    response = people.client("alice").get(url)

    assert response["Content-Type"] == "image/png" and b"".join(response.streaming_content) == png_bytes()
    assert people.client("alice").get(url.replace(attachment["id"], "1")).status_code == 404


def test_a_channel_name_follows_discords_rules(people):
    alice = people.client("alice")
    url = reverse("playground:create_channel", args=[people.demo.server.pk])

    created = alice.post(url, {"name": "  #Book Club  ", "topic": "novels"})
    nameless = alice.post(url, {"name": "  # "})

    channel = PlaygroundChannel.objects.get(name="book-club")
    assert created["Location"].endswith(f"?server={people.demo.server.pk}&channel={channel.pk}")
    assert channel.topic == "novels" and nameless.status_code == 400


def test_the_inspector_links_a_playground_records_trigger_to_its_message_in_the_channel(people):
    """Issue 16: a playground record's trigger (and excluded messages) link to the playground
    message, which opens its channel scrolled to it; the author is named by username."""
    alice = people.client("alice")
    page = " ".join(
        alice.get(reverse("admin:chatcontext_promptrecord_change", args=[people.record.pk])).content.decode().split()
    )
    link = reverse("playground:message", args=[people.message.disc_id])
    assert f'<a href="{link}" target="_blank" rel="noopener">{people.message.disc_id}</a> by' in page
    assert "discord.com/channels" not in page
    opened = alice.get(link)
    channel = people.demo.channel
    expected = (
        f"{reverse('playground:index')}?server={channel.server_id}&channel={channel.pk}#msg-{people.message.disc_id}"
    )
    assert opened.status_code == 302 and opened["Location"] == expected
    assert 'id="pg-initial-messages"' in alice.get(expected.split("#")[0]).content.decode()
