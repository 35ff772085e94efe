"""Voice messages: speech-to-text on faster-whisper and the Celery task that fills the transcript cache."""
