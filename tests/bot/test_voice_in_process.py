"""Issue 27 item 7: in the embedded default (no ``REDIS_URL``, no broker) the bot transcribes voice
messages in-process, on ``chatcontext.voice.tasks``' one speech-to-text thread (its bound is tested in
tests/botplatform/celery/test_voice.py), so a persona hears them. Real parts: dpytest, espeak-ng speech and
the bundled Whisper model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import discord.ext.test as dpytest
import pytest

from chatcontext.models import VoiceTranscript
from chatcontext.voice.cache import shared_cache
from tests.bot.fakes import run_db, setup_server
from tests.botplatform.celery.conftest import SENTENCE, word_error_rate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WAIT_SECONDS = 120  # a bound on a hang, not a timing assertion


async def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not await run_db(condition):
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {WAIT_SECONDS}s")
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("harness", [{"transcripts": shared_cache}], indirect=True)
async def test_a_voice_message_is_transcribed_in_process_and_a_later_turn_hears_it(
    harness, settings, speech_files, transcriber
):
    assert settings.CELERY_TASK_ALWAYS_EAGER  # the embedded default: no broker
    await run_db(setup_server, harness.guild)

    voice = await dpytest.message("", member=harness.member(0), attachments=[str(speech_files.ogg)])
    await wait_for(lambda: VoiceTranscript.objects.filter(message_disc_id=str(voice.id)).exists(), "transcript")
    await dpytest.message("tomori, what did I just say?", member=harness.member(0))

    heard = (await VoiceTranscript.objects.aget(message_disc_id=str(voice.id))).transcript
    assert word_error_rate(SENTENCE, heard) < 0.3, heard
    prompt = "\n".join(item.text for item in harness.prompts[-1])
    assert heard in prompt
