"""The hydration run in its phase order (H-01..H-22): users read and named, memories and reminders
read, the mention directory filled, then one profile per seed in the stable profile order of H-22
(public-only personas last) and the diagnostics."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from chatcontext.core.participants.mentions import MentionDirectory, extend_directory
from chatcontext.core.participants.model import (
    HydratedParticipantProfile,
    ParticipantSeed,
    PreparedParticipantContext,
)
from chatcontext.core.participants.naming import primary_alias, saved_name_allowed
from chatcontext.core.types import MemoryRow, ReminderRow, SimplifiedMessage
from chatcontext.participants.hydration.fields import user_fields
from chatcontext.participants.hydration.identity import register_mention_targets, resolve_identity, user_aliases
from chatcontext.participants.hydration.other_profiles import (
    apply_public_profiles,
    bot_profile,
    matrix_profile,
    synthetic_profile,
    task_lines,
)
from chatcontext.participants.hydration.reads import load_memories, load_naming_preferences, load_reminders, load_users
from chatcontext.participants.hydration.state import HydrationResult, HydrationRun, ParticipantTurn, UserState
from chatcontext.participants.loaders import HydrationDeps
from chatcontext.participants.sources import MENTIONABLE


def build_conversation_corpus(history: Iterable[SimplifiedMessage], *, memory_tagging_enabled: bool) -> str | None:
    """H-14 step 4 corpus: sanitized contents joined by a space, lower-cased; None when tagging is off."""
    if not memory_tagging_enabled:
        return None
    return " ".join(m.content for m in history if m.content).lower()


# H-22 [DEC]: the profile block sits early in the prompt, so its order must not change when the
# history window slides (a provider's prefix cache keeps only an unchanged start of the request).
# First appearance did change it; kind then Discord id (a snowflake never changes) does not.
_KIND_ORDER = {"bot": 0, "persona": 1, "discord_user": 2, "matrix_user": 3, "webhook": 4}


def stable_profile_order(seed: ParticipantSeed) -> tuple[int, int, str]:
    """H-22: bot, personas, Discord users, Matrix users, webhooks; each by id (numeric ids by value)."""
    key = seed.key
    return (_KIND_ORDER.get(key.kind, len(_KIND_ORDER)), len(key.id) if key.id.isdigit() else 0, key.id)


def _run(run: HydrationRun, seeds: Sequence[ParticipantSeed]) -> HydrationResult:
    user_seeds = [s for s in seeds if s.key.kind == "discord_user"]
    users = load_users(run, user_seeds)
    for user in users.values():
        user.saved_name_use = saved_name_allowed(
            personalization_enabled=run.personalization, blacklisted=user.blacklisted, privacy_level=user.privacy
        )
    # H-09 is skipped on impersonation turns, so their preferences are never read.
    preferences = {} if run.scope.is_user_impersonation else load_naming_preferences(run, users.values())
    for user in users.values():
        resolve_identity(run, user, preferences)
    memories, server_memories = load_memories(run, users.values())
    reminders, tasks = load_reminders(run, users.values())

    register_mention_targets(run, users.values())
    texts = [m.content for rows in memories.values() for m in rows]
    texts += [a for p in run.prepared.public_persona_profiles for a in p.attributes]
    extend_directory(run.directory, texts, run.deps)

    profiles: list[HydratedParticipantProfile] = []
    has_bot = False
    for seed in sorted(seeds, key=stable_profile_order):
        kind = seed.key.kind
        if kind == "discord_user":
            found = users.get(seed.key)
            if found is not None:
                profiles.append(_user_profile(run, found, memories, reminders))
        elif kind == "bot" or (kind == "persona" and "active_identity" in seed.reasons):
            if not has_bot:
                profiles.append(bot_profile(run, seed))
                has_bot = True
        elif kind == "matrix_user":
            matrix = matrix_profile(run, seed)
            if matrix is not None:
                profiles.append(matrix)
        elif kind == "webhook" or (kind == "persona" and "historical_persona" in seed.reasons):
            synthetic = synthetic_profile(run, seed)
            if synthetic is not None:
                profiles.append(synthetic)
    apply_public_profiles(run, profiles, {s.key: s for s in seeds})
    return HydrationResult(
        profiles=profiles,
        persona_task_lines=task_lines(run, tasks),
        diagnostics={
            "profile_count": len(profiles),
            "external_calls": dict(run.calls.reads),
            "dependency_calls": dict(run.calls.batches),
            "read_failures": dict(run.calls.failures),
            # H-22 lists enricher outcomes; extension enrichers are deferred (H-20), so there
            # are none, and the key stays for the stored diagnostics' shape.
            "enrichers": {},
        },
        memory_entries=sorted(run.memory_entries, key=lambda e: (e.created_at_ms, e.memory_id), reverse=True),
        mention_directory=run.directory,
        server_memories=server_memories,
    )


def _user_profile(
    run: HydrationRun,
    user: UserState,
    memories: Mapping[int, list[MemoryRow]],
    reminders: Mapping[str, list[ReminderRow]],
) -> HydratedParticipantProfile:
    return HydratedParticipantProfile(
        key=user.key,
        reasons=set(user.seed.reasons),
        display_name=user.display_name,
        aliases=user_aliases(run, user),
        primary_alias=primary_alias(user.member, user.fallback, user.disc_id),
        mentionable=MENTIONABLE in user.seed.capabilities,
        is_bot=False,
        resolvable_target_id=user.disc_id,
        fields=user_fields(run, user, memories.get(user.row.user_id, []), reminders.get(user.disc_id, [])),
        timezone_offset=user.row.timezone_offset,
    )


def hydrate_participant_profiles(
    prepared: PreparedParticipantContext,
    turn: ParticipantTurn,
    *,
    deps: HydrationDeps,
    conversation_corpus: str | None = None,
    expand_attribute_macros: Callable[[str], str] | None = None,
    mention_directory: MentionDirectory | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> HydrationResult:
    """H-01..H-22: profiles in seed order (public-only personas last), persona task lines, diagnostics.

    ``conversation_corpus`` comes from
    ``build_conversation_corpus`` (None when memory tagging is off). ``expand_attribute_macros`` is
    the tool layer's macro resolver for public attributes (H-19). ``mention_directory`` is the turn's
    one directory (R-14): the participants are registered in it with the names P-02 allows, so every
    later conversion of the turn names them alike; None gives the run a directory of its own.
    ``clock`` only measures the duration reported in the diagnostics.
    """
    started = clock()
    seeds = prepared.discovery_plan.seeds
    keys = [s.key for s in seeds]
    if len(set(keys)) != len(keys):
        raise ValueError("participant seeds must have unique keys")  # H-03
    run = HydrationRun(
        prepared,
        turn,
        deps=deps,
        corpus=conversation_corpus if turn.server.memory_tagging_enabled else None,
        expand_attribute_macros=expand_attribute_macros,
        mention_directory=mention_directory,
    )
    if not seeds:
        result = HydrationResult([], [], {"profile_count": 0, "external_calls": dict(run.calls.reads)})
    else:
        result = _run(run, seeds)
    result.diagnostics["duration_ms"] = round((clock() - started) * 1000, 3)
    return result
