"""Profile hydration (participants.md §3 H-01..H-22, §4 P-01..P-07).

``hydrate_participant_profiles`` is the imperative shell of phase 2: it reads everything it needs
through one ``HydrationDeps`` object in a constant number of batched reads (rows, privacy,
blacklist, registrations, memories, reminders, naming preferences — each one query for all
participants) plus targeted Discord reads per participant, then builds the profiles with pure
helpers. Privacy decisions are taken here, before rendering: the renderer only ever sees fields
that are allowed to be shown.

    orchestration   the run in phase order, the entry point and the result's diagnostics
    reads           the batched reads and their fail-closed handling (H-04..H-06)
    identity        display names, naming, aliases, mention targets (H-07..H-10, R-14)
    fields          a Discord user's profile fields and their hidden reasons (H-11..H-15)
    other_profiles  bot, bridged, synthetic and public persona profiles, task lines (H-16..H-21)
    state           the turn as hydration sees it, the run's inputs, the per-user state, the result types
    calls           read counting and the guarded read (H-02, H-22)
"""

from chatcontext.participants.hydration.orchestration import build_conversation_corpus, hydrate_participant_profiles
from chatcontext.participants.hydration.state import (
    HydrationResult,
    MemoryEntry,
    ParticipantTurn,
    RequestSnapshot,
    TurnUserReads,
)

__all__ = [
    "HydrationResult",
    "MemoryEntry",
    "ParticipantTurn",
    "RequestSnapshot",
    "TurnUserReads",
    "build_conversation_corpus",
    "hydrate_participant_profiles",
]
