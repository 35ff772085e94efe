"""Fixtures for the background-work tests: reminders, retention, speech and a real Celery worker."""

from __future__ import annotations

import shutil
import subprocess
import threading
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chatcontext.voice.engine.transcribe import WhisperTranscriber, default_transcriber
from personas.models import Persona, Reminder, Server
from personas.reminder_firing import ChannelGone, DueReminder, accept_delivery, acknowledge_delivery

NOW = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
BOT_USER_ID = "900000000000000001"
# espeak-ng's en-us voice at 150 wpm is transcribed well by the tiny.en model; sentences with
# digits are avoided because Whisper writes "ten" as "10".
SENTENCE = "The weather is nice today and we are going to the park after lunch."


@dataclass
class RecordingDispatcher:
    """A ReminderDispatcher that posts in-process and records what it posted: it takes and confirms
    each occurrence at the tick's time, as a poster does (``confirm=False``: hands over only, like
    the Channels layer). ``fail_with`` makes every hand-over raise."""

    fail_with: Callable[[], Exception] | None = None
    confirm: bool = True
    delivered: list[DueReminder] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def dispatch(self, reminder: DueReminder) -> None:
        if self.fail_with is not None:
            raise self.fail_with()
        with self._lock:
            self.delivered.append(reminder)
        if self.confirm:
            at = datetime.fromtimestamp(reminder.fired_at_ms / 1000, tz=UTC)
            assert accept_delivery(reminder.reminder_id, reminder.scheduled_at_ms, now=at)
            assert acknowledge_delivery(reminder.reminder_id, reminder.scheduled_at_ms, now=at)

    @property
    def ids(self) -> list[int]:
        return [d.reminder_id for d in self.delivered]


def channel_gone() -> Exception:
    return ChannelGone("unknown channel")


@pytest.fixture
def server(db: None) -> Server:
    return Server.objects.create(server_disc_id="500000000000000001", name="Guild")


@pytest.fixture
def persona(server: Server) -> Persona:
    return Persona.objects.create(server=server, persona_nickname="Tomori")


@pytest.fixture
def make_reminder(server: Server) -> Callable[..., Reminder]:
    def make(**overrides: Any) -> Reminder:
        values: dict[str, Any] = {
            "server": server,
            "channel_disc_id": "600000000000000001",
            "user_discord_id": "111111111111111111",
            "user_nickname": "Ann",
            "reminder_purpose": "stretch",
            "reminder_time": NOW,
        }
        values.update(overrides)
        return Reminder.objects.create(**values)

    return make


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level Levenshtein distance over the reference length, after lower-casing and dropping punctuation."""

    def words(text: str) -> list[str]:
        return "".join(c if c.isalnum() or c.isspace() else " " for c in text.lower()).split()

    ref, hyp = words(reference), words(hypothesis)
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h))
        previous = current
    return previous[-1] / max(1, len(ref))


def espeak_wav(text: str, path: Path) -> Path:
    if shutil.which("espeak-ng") is None:
        pytest.fail("espeak-ng is not installed: run `make system-deps` (apt-get install espeak-ng)")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
    return path


def wav_to_ogg_opus(wav: Path, ogg: Path) -> Path:
    """Re-encode as OGG/Opus at 48 kHz mono, the format of Discord voice messages (PyAV's bundled libopus)."""
    import av

    with av.open(str(wav)) as source, av.open(str(ogg), "w", format="ogg") as target:
        stream = target.add_stream("libopus", rate=48000, layout="mono")
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for frame in source.decode(source.streams.audio[0]):
            for resampled in resampler.resample(frame):
                for packet in stream.encode(resampled):
                    target.mux(packet)
        for resampled in resampler.resample(None):
            for packet in stream.encode(resampled):
                target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    return ogg


@dataclass(frozen=True)
class SpeechFiles:
    wav: Path
    ogg: Path
    silent: Path
    corrupt: Path
    empty: Path


@pytest.fixture(scope="session")
def speech_files(tmp_path_factory: pytest.TempPathFactory) -> SpeechFiles:
    root = tmp_path_factory.mktemp("speech")
    wav = espeak_wav(SENTENCE, root / "sentence.wav")
    silent = root / "silent.wav"
    with wave.open(str(silent), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(b"\x00\x00" * 16000 * 3)
    corrupt = root / "corrupt.ogg"
    # An OGG page header followed by garbage: looks like a voice message, decodes to nothing.
    corrupt.write_bytes(b"OggS\x00\x02" + bytes(range(256)) * 40)
    empty = root / "empty.ogg"
    empty.write_bytes(b"")
    return SpeechFiles(
        wav=wav, ogg=wav_to_ogg_opus(wav, root / "sentence.ogg"), silent=silent, corrupt=corrupt, empty=empty
    )


@pytest.fixture(scope="session")
def transcriber() -> Iterator[WhisperTranscriber]:
    """The process-wide transcriber: the whole suite loads the model at most once."""
    yield default_transcriber()
