"""An uploaded voice message goes through the transcription task (``chatcontext.voice.tasks``) before the
turn, with the real Whisper model, so the persona's prompt holds what was said (BC11-01/02)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chatcontext.models import VoiceTranscript
from tests.bot.playground.conftest import MINA, REI
from tests.bot.playground.turns import post, prompt_text
from tests.botplatform.celery.conftest import SENTENCE, word_error_rate

pytestmark = pytest.mark.slow
MAX_WER = 0.3


def voice(speech_files) -> SimpleUploadedFile:  # type: ignore[no-untyped-def]
    return SimpleUploadedFile("voice-message.ogg", speech_files.ogg.read_bytes(), "audio/ogg")


def test_bc11_01_an_uploaded_voice_message_is_transcribed_before_the_turn(demo, speech_files, transcriber):
    outcome = post(demo, MINA, demo.mention(), attachments=[voice(speech_files)])

    assert outcome.transcription is not None and outcome.transcription.status == "transcribed"
    heard = outcome.transcription.text
    assert word_error_rate(SENTENCE, heard) < MAX_WER, heard
    stored = VoiceTranscript.objects.get(message_disc_id=outcome.message.disc_id)
    assert stored.transcript == heard and stored.attachment_disc_id == outcome.message.attachments[0]["id"]
    [record] = outcome.records
    assert heard in prompt_text(record)


def test_bc11_03_a_privacy_full_authors_voice_message_is_never_transcribed(demo, speech_files):
    outcome = post(demo, REI, demo.mention(), attachments=[voice(speech_files)])

    assert outcome.transcription is None and outcome.skip == "privacy_full"
    assert not VoiceTranscript.objects.exists()
