"""Voice messages (BC11): speech-to-text on faster-whisper, the Celery task that fills the transcript
cache, the cache itself and the pre-hydration the stage runs."""
