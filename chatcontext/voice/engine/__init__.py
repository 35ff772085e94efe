"""Speech-to-text without Django: reading the audio with a byte cap and faster-whisper on the
bundled weights (``bench/stt.py`` uses it without settings)."""
