"""What the playground tells a moderator about a message it did not answer (issue 16, item 11): why
nobody answered and why an audio file has no transcript, kept with the message so a reload shows it
again; a failed generation's notice as Discord gets it; and an empty inspector points to the
playground."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from bot.conversation.admission import Skip
from bot.conversation.texts import ERROR_MESSAGES
from bot.playground import service
from bot.playground.models import PlaygroundMessage
from bot.playground.notes import SKIP_NOTES, TRANSCRIPTION_NOTES, message_notes
from chatcontext.models import PromptRecord
from chatcontext.voice.engine.transcribe import FailureReason
from chatcontext.voice.tasks import TranscriptionOutcome
from personas.models import ServerModerator
from tests.bot.playground.conftest import MINA, REI, Demo
from tests.bot.playground.turns import FailingProvider, post

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(demo: Demo) -> Client:
    user = get_user_model().objects.create_user("alice", is_staff=True)
    ServerModerator.objects.create(server=demo.server, user=user)
    client = Client()
    client.force_login(user)
    return client


def page_messages(client: Client, demo: Demo) -> dict[str, dict[str, Any]]:
    url = f"{reverse('playground:index')}?server={demo.server.pk}&channel={demo.channel.pk}"
    return {m["id"]: m for m in client.get(url).context["chat_messages"]}


def voice() -> SimpleUploadedFile:
    return SimpleUploadedFile("voice-message.ogg", b"OggS not really audio", "audio/ogg")


def test_why_a_message_was_not_answered_is_shown_again_after_a_reload(demo: Demo, alice: Client) -> None:
    url = reverse("playground:send_message", args=[demo.channel.pk])
    refused = alice.post(url, {"identity": REI, "content": "tomori, psst"}).json()
    ignored = alice.post(url, {"identity": MINA, "content": "just thinking out loud"}).json()

    assert refused["messages"][0]["notes"] == [SKIP_NOTES["privacy_full"]]
    assert ignored["messages"][0]["notes"] == [SKIP_NOTES["not_triggered"]]
    reloaded = page_messages(alice, demo)
    assert reloaded[refused["messages"][0]["id"]]["notes"] == [SKIP_NOTES["privacy_full"]]
    assert reloaded[ignored["messages"][0]["id"]]["notes"] == [SKIP_NOTES["not_triggered"]]
    answered = alice.post(url, {"identity": MINA, "content": "tomori, hello"}).json()
    assert [m["notes"] for m in answered["messages"]] == [[], []]  # the message and its reply


def test_bc11_03_a_privacy_full_authors_audio_says_it_is_never_transcribed(demo: Demo, alice: Client) -> None:
    outcome = post(demo, REI, f"{demo.mention()} listen", attachments=[voice()])

    assert outcome.transcription is None
    notes = page_messages(alice, demo)[outcome.message.disc_id]["notes"]
    assert notes == [TRANSCRIPTION_NOTES["privacy_full"], SKIP_NOTES["privacy_full"]]
    assert "FULL" in notes[0] and "speech-to-text" in notes[0]


def test_an_audio_file_the_transcriber_could_not_read_says_why(demo: Demo, alice: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    async def undecodable(row: PlaygroundMessage) -> TranscriptionOutcome:
        return TranscriptionOutcome("failed", row.disc_id, failure=str(FailureReason.UNDECODABLE))

    monkeypatch.setattr(service, "transcribe_before_turn", undecodable)
    outcome = post(demo, MINA, f"{demo.mention()} listen to this", attachments=[voice()])

    assert len(outcome.records) == 1  # the turn still runs, without a transcript
    stored = PlaygroundMessage.objects.get(pk=outcome.message.pk)
    assert (stored.transcription_failure, stored.skip_reason) == ("undecodable", "")
    assert page_messages(alice, demo)[stored.disc_id]["notes"] == [
        "Not transcribed: the file could not be decoded as audio."
    ]


def test_every_failure_reason_and_skip_has_its_own_words() -> None:
    assert set(FailureReason) <= set(TRANSCRIPTION_NOTES) and set(Skip) <= set(SKIP_NOTES)
    assert message_notes("", "") == []
    assert message_notes("later_reason", "new_failure") == [
        "Not transcribed (new_failure).",
        "Not answered (later_reason).",
    ]


def test_a_failed_generation_shows_discords_notice_in_the_chat_also_after_a_reload(demo: Demo, alice: Client) -> None:
    runner = service.playground_runner(provider_factory=lambda config, name: FailingProvider())
    async_to_sync(service.post_playground_message)(demo.channel, MINA, "tomori, are you there?", runner=runner)

    shown = [m for m in page_messages(alice, demo).values() if m["kind"] == "bot"]
    assert [m["content"] for m in shown] == [ERROR_MESSAGES["en-US"]]


def test_an_empty_inspector_points_to_the_playground(demo: Demo, alice: Client) -> None:
    changelist = reverse("admin:chatcontext_promptrecord_changelist")
    hint = "No prompt records yet"
    empty = alice.get(changelist).content.decode()
    assert hint in empty and f'href="{reverse("playground:index")}"' in empty

    post(demo, MINA, "tomori, hello")
    assert PromptRecord.objects.exists()
    assert hint not in alice.get(changelist).content.decode()
    assert hint not in alice.get(f"{changelist}?q=nobody").content.decode()  # a search that finds nothing
