"""Why the platform did not answer a playground message, or did not transcribe its audio (issue 16,
item 11). Stored on the message (``PlaygroundMessage.skip_reason`` / ``transcription_failure``), so
the note is there again after a reload, and worded here once for every page that shows it."""

from __future__ import annotations

from bot.conversation.admission import Skip
from chatcontext.voice.engine.transcribe import FailureReason

QUEUE_FULL = "queue_full"
# The process running the message's turn stopped before the turn ended (``store.note_interrupted_turns``).
SERVER_RESTARTED = "server_restarted"
# The author's audio is never sent to speech-to-text (BC11-03); not a failure of the transcriber.
PRIVACY_FULL_AUDIO = "privacy_full"
# With a broker, no worker answered within PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS.
NO_WORKER = "no_worker"

SKIP_NOTES = {
    Skip.NOT_TRIGGERED: "No persona was addressed: mention the bot, reply to a persona or use a trigger word.",
    Skip.PRIVACY_FULL: "Not answered: this person's privacy level is FULL, so they cannot trigger a persona.",
    Skip.BLOCKED: "Not answered: this person is muted or blocked by every persona addressed.",
    Skip.OWN_MESSAGE: "Not answered: the bot never answers itself.",
    Skip.BOT_AUTHOR: "Not answered: personas never answer bots.",
    Skip.WEBHOOK: "Not answered: personas never answer webhooks.",
    Skip.SYSTEM_MESSAGE: "Not answered: system messages never trigger.",
    QUEUE_FULL: "Not answered: this channel's queue is full; try again in a moment.",
    SERVER_RESTARTED: "Not answered: the server restarted while the reply was being written; send it again.",
}

_UNREADABLE = "Not transcribed: the audio file could not be read."
TRANSCRIPTION_NOTES = {
    PRIVACY_FULL_AUDIO: "Not transcribed: this person's privacy level is FULL, so their audio is never sent to "
    "speech-to-text.",
    FailureReason.TOO_LARGE: "Not transcribed: the audio file is larger than the transcription download limit.",
    FailureReason.NOT_FOUND: _UNREADABLE,
    FailureReason.DOWNLOAD_FAILED: _UNREADABLE,
    FailureReason.UNSUPPORTED_SOURCE: _UNREADABLE,
    FailureReason.UNDECODABLE: "Not transcribed: the file could not be decoded as audio.",
    FailureReason.NO_SPEECH: "Not transcribed: no speech was heard in it.",
    FailureReason.TIMEOUT: "Not transcribed: speech-to-text took too long.",
    NO_WORKER: "Not transcribed in time: no speech-to-text worker answered (is `celery -A botplatform worker` "
    "running?), so the reply was written without the transcript.",
}


def message_notes(skip_reason: str, transcription_failure: str) -> list[str]:
    """The notes shown under a message, transcription first (it happens before admission)."""
    notes = []
    if transcription_failure:
        notes.append(TRANSCRIPTION_NOTES.get(transcription_failure, f"Not transcribed ({transcription_failure})."))
    if skip_reason:
        notes.append(SKIP_NOTES.get(skip_reason, f"Not answered ({skip_reason})."))
    return notes
