"""The chatcontext app's models, which live with their packages (``records``, ``voice``).

Django registers an app's models by importing ``<app>.models``; this module is that import.
"""

from chatcontext.records.models import PromptRecord
from chatcontext.voice.models import VoiceTranscript

__all__ = ["PromptRecord", "VoiceTranscript"]
