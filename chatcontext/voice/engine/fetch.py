"""Reading a voice attachment into memory with a hard byte cap: http(s) URLs, file:// URLs or plain paths."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

from chatcontext.voice.engine.transcribe import FailureReason, TranscriptionFailed

# Discord's largest upload for non-boosted servers; voice messages are far smaller.
DEFAULT_MAX_BYTES = 25 * 1024 * 1024
DOWNLOAD_TIMEOUT_SECONDS = 20.0
CHUNK_BYTES = 64 * 1024


def fetch_audio(url_or_path: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The attachment's bytes; raises ``TranscriptionFailed`` (too large, missing, unreachable, bad scheme)."""
    scheme = urlsplit(url_or_path).scheme.lower()
    if scheme in ("http", "https"):
        return _download(url_or_path, max_bytes)
    if scheme == "file":
        return _read_file(Path(url2pathname(urlsplit(url_or_path).path)), max_bytes)
    if scheme and len(scheme) > 1:  # one letter is a Windows drive, not a scheme
        raise TranscriptionFailed(FailureReason.UNSUPPORTED_SOURCE)
    return _read_file(Path(url_or_path), max_bytes)


def _read_file(path: Path, max_bytes: int) -> bytes:
    try:
        if path.stat().st_size > max_bytes:
            raise TranscriptionFailed(FailureReason.TOO_LARGE)
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise TranscriptionFailed(FailureReason.NOT_FOUND) from exc
    if len(data) > max_bytes:  # the file grew after stat
        raise TranscriptionFailed(FailureReason.TOO_LARGE)
    return data


def _download(url: str, max_bytes: int) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "TomoriPlatform-voice/1"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise TranscriptionFailed(FailureReason.TOO_LARGE)
            chunks: list[bytes] = []
            received = 0
            while chunk := response.read(CHUNK_BYTES):
                received += len(chunk)
                if received > max_bytes:  # a missing or lying Content-Length
                    raise TranscriptionFailed(FailureReason.TOO_LARGE)
                chunks.append(chunk)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise TranscriptionFailed(FailureReason.DOWNLOAD_FAILED) from exc
    return b"".join(chunks)
