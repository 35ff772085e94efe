"""Profile hydration (participants.md §3 H-01..H-22, §4 P-01..P-07)."""

from chatcontext.participants.hydration.orchestration import (
    HydrationResult,
    MemoryEntry,
    RequestSnapshot,
    build_conversation_corpus,
    hydrate_participant_profiles,
)

__all__ = [
    "HydrationResult",
    "MemoryEntry",
    "RequestSnapshot",
    "build_conversation_corpus",
    "hydrate_participant_profiles",
]
