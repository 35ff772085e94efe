"""Voice-transcript pre-hydration and cache (build-context.md §11; scenarios 67–68)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatcontext.core.transcripts import CachedTranscript, MemoryTranscriptCache
from chatcontext.core.types import Attachment, DiscordMessage
from chatcontext.voice.cache import DatabaseTranscriptCache
from tests.chatcontext.builders import ANN, BOB, BOT, NOW, SERVER, U2, block, msg, run_history, webhook_msg


def ogg(attachment_id: str) -> Attachment:
    return Attachment(
        id=attachment_id, name="v.ogg", url=f"https://cdn.example/{attachment_id}.ogg", content_type="audio/ogg"
    )


class FakeTranscriber:
    def __init__(self, answer: str | None = "transcribed words", fail_on: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, str]] = []
        self.answer = answer
        self.fail_on = fail_on

    def __call__(self, attachment: Attachment, message: DiscordMessage) -> str | None:
        self.calls.append((message.id, attachment.id))
        if message.id in self.fail_on:
            raise RuntimeError("stt down")
        return self.answer


def _channel() -> list[DiscordMessage]:
    return [
        msg("bot", BOT, "", attachments=(ogg("a0"),)),
        webhook_msg("hook", "Ellen", "", attachments=(ogg("a1"),)),
        msg("fresh", ANN, "", attachments=(ogg("a2"), ogg("a2b"))),
        msg("known", ANN, "", attachments=(ogg("a3"),)),
        msg("blocked", BOB, "", attachments=(ogg("a4"),)),
    ]


def test_s67_bc11_01_only_uncached_visible_human_audio_is_transcribed() -> None:
    cache = MemoryTranscriptCache()
    cache.put("known", "already known", "user_stt", now_ms=NOW)
    stt = FakeTranscriber()
    run = run_history(_channel(), cache=cache, transcriber=stt, blocks=[block(U2, 90)])
    assert stt.calls == [("fresh", "a2")]  # the first audio attachment only
    assert run.result.voice_transcriptions == 1
    assert cache.entries["fresh"] == CachedTranscript("transcribed words", "user_stt", NOW)
    assert "blocked" not in cache.entries
    # Ann's two voice messages carry no image/video, so they merge (BC4-01).
    assert run.entry("fresh").individual_contents == [
        "[System: This was sent as a voice message.]\ntranscribed words "
        "[System: An audio file named `v.ogg` was sent here but was not transcribed.]",
        "[System: This was sent as a voice message.]\nalready known",
    ]


def test_s67_bc11_01_chat_mode_true_makes_no_calls() -> None:
    stt = FakeTranscriber()
    run = run_history(_channel(), transcriber=stt, server=replace(SERVER, voice_transcript_chat_mode=True))
    assert stt.calls == []
    assert run.result.voice_transcriptions == 0


def test_bc11_01_failures_and_empty_results_store_nothing_and_do_not_abort() -> None:
    messages = [msg("m1", ANN, "", attachments=(ogg("x1"),)), msg("m2", BOB, "", attachments=(ogg("x2"),))]
    stt = FakeTranscriber(answer="  ", fail_on=("m1",))
    run = run_history(messages, transcriber=stt)
    assert [c[0] for c in stt.calls] == ["m1", "m2"]
    assert run.cache.entries == {}
    assert len(run.entries) == 2


def test_bc11_02_any_cache_entry_counts_as_known() -> None:
    cache = MemoryTranscriptCache()
    cache.put("m1", "caption", "tts", now_ms=NOW)
    stt = FakeTranscriber()
    run_history([msg("m1", ANN, "", attachments=(ogg("x1"),))], cache=cache, transcriber=stt)
    assert stt.calls == []


def test_s68_bc11_02_expired_entries_are_absent_and_evicted() -> None:
    cache = MemoryTranscriptCache()
    cache.put("m1", "old", "user_stt", now_ms=NOW - 121 * 60_000)
    cache.put("m2", "fresh", "user_stt", now_ms=NOW - 119 * 60_000)
    found = cache.get_many(["m1", "m2"], now_ms=NOW, ttl_minutes=120)
    assert list(found) == ["m2"]
    assert "m1" not in cache.entries


@pytest.mark.django_db
def test_s68_bc11_02_database_cache_expiry_is_shared_and_evicted() -> None:
    from chatcontext.models import VoiceTranscript

    writer = DatabaseTranscriptCache()
    writer.put("m1", "old", "user_stt", now_ms=NOW - 121 * 60_000)
    reader = DatabaseTranscriptCache()
    assert reader.get_many(["m1"], now_ms=NOW, ttl_minutes=120) == {}
    assert not VoiceTranscript.objects.filter(message_disc_id="m1").exists()
