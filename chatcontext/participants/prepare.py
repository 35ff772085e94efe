"""Phase 1 of the participant contributor: ``prepare_participant_context`` (participants.md §1, §2;
build-context.md BC10-01..BC10-04).

Shared reference discovery is cached per request scope; per-persona composition (D-25..D-33) and the
diagnostics are recomputed on every call (C-08). Discovery is context-only (D-35): nothing here takes
or returns routing state, so it can never change which personas respond.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from chatcontext.core.participants.model import PreparationInput, PreparedParticipantContext
from chatcontext.participants.candidates import CandidateSource, load_candidate_rows
from chatcontext.participants.discovery import ExternalCalls, MemberDirectory, discover_shared_references
from chatcontext.participants.scope import (
    CachedDiscovery,
    ParticipantRequestScope,
    discovery_cache_key,
    freeze_input,
)
from chatcontext.participants.sources import (
    SourceRegistry,
    compose_plan,
    default_source_registry,
    scope_reference_plan,
    scoped_public_profiles,
)


def _elapsed_ms(clock: Callable[[], float], started: float) -> float:
    return round((clock() - started) * 1000, 3)


def prepare_participant_context(
    input: PreparationInput,
    *,
    request_scope: ParticipantRequestScope | None = None,
    candidate_source: CandidateSource | None = None,
    member_directory: MemberDirectory | None = None,
    source_registry: SourceRegistry | None = None,
    now_ms: int,
    clock: Callable[[], float] = time.perf_counter,
) -> PreparedParticipantContext:
    """Discovery plan and typed seeds for one persona turn.

    ``request_scope``: the locked turn's scope (``request_scope_for(locked_turn)``); None gives this
    call a scope of its own. ``member_directory`` None means the guild is unavailable (D-15);
    ``member_directory_for(transport)`` adapts a ``ChatTransport``. ``clock`` only measures
    durations for the diagnostics (D-36); it never influences the result.
    """
    frozen = freeze_input(input)  # C-02: before anything else
    scope = request_scope if request_scope is not None else ParticipantRequestScope()
    source = candidate_source if candidate_source is not None else load_candidate_rows

    def discover() -> CachedDiscovery:
        started = clock()
        shared = discover_shared_references(
            frozen, candidate_source=source, member_directory=member_directory, now_ms=now_ms
        )
        return CachedDiscovery(shared, _elapsed_ms(clock, started))

    waiting_since = clock()
    cached, hit = scope.get_or_compute(discovery_cache_key(frozen), discover)
    shared = cached.shared

    # C-08: per-persona work, recomputed even on a hit.
    active = frozen.active_persona
    profiles = scoped_public_profiles(shared.public_persona_profiles, active)
    scoped_plan = scope_reference_plan(
        shared.reference_plan,
        active_persona=active,
        public_profiles=profiles,
        synthetic_users=frozen.synthetic_users,
    )
    plan, source_outcomes = compose_plan(
        frozen,
        active_persona=active,
        reference_plan=scoped_plan,
        registry=source_registry if source_registry is not None else default_source_registry(),
    )
    # D-36 / BC10-04: counts and booleans only — never ids, aliases, names or text.
    diagnostics: dict[str, Any] = {
        "discovery_cache_hit": hit,
        "discovery_duration_ms": _elapsed_ms(clock, waiting_since) if hit else cached.duration_ms,
        "candidate_count": shared.candidate_count,
        "included_count": len(plan.seeds),
        "rejection_counts": dict(plan.rejections),
        "alias_reference_diagnostics": dict(plan.alias_reference_diagnostics),
        "external_calls": (ExternalCalls() if hit else shared.external_calls).as_dict(),
        "sources": source_outcomes,
    }
    return PreparedParticipantContext(
        discovery_plan=plan,
        matrix_users=dict(frozen.matrix_users),
        synthetic_users={k: dict(v) for k, v in frozen.synthetic_users.items()},
        public_persona_profiles=profiles,
        referenced_user_rows=dict(shared.referenced_user_rows),
        referenced_user_ids=list(shared.referenced_user_ids),
        diagnostics=diagnostics,
    )
