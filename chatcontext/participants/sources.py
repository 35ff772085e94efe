"""Per-persona composition of the discovery plan (participants.md D-25..D-33).

Never cached (C-08): it runs for every persona turn on top of the shared reference discovery. The
source registry holds the five core sources (all critical) plus optional or critical extension
sources; ``build_plan`` is the D-33 merge shared with the reference plan of discovery (D-24).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from chatcontext.core.participants.aliases import bridge_alias, webhook_alias
from chatcontext.core.participants.model import (
    REJECTION_REASONS,
    ParticipantAlias,
    ParticipantDiscoveryPlan,
    ParticipantKey,
    ParticipantSeed,
    PreparationInput,
    PublicPersonaProfile,
    parse_persona_id,
    typed_persona_id,
)
from chatcontext.core.participants.registry import order_registrations
from chatcontext.core.types import PersonaInfo

MENTIONABLE = "mentionable"
DEFAULT_SOURCE_TIMEOUT_MS = 1500


class ParticipantSourceError(Exception):
    """A source broke a D-28..D-32 rule, raised, or timed out (raised only for critical sources)."""


class RegistryError(ValueError):
    """D-32: duplicate ids, unknown dependencies or cycles, detected when the registry is built."""


@dataclass
class ParticipantCandidate:
    """What a source emits. ``evidence`` defaults to the reasons (D-29 gives webhooks
    `historical_synthetic` instead). Capabilities are NOT taken from here (D-31)."""

    key: ParticipantKey
    reasons: set[str]
    aliases: list[ParticipantAlias] = field(default_factory=list)
    source_display_name: str | None = None
    evidence: tuple[str, ...] | None = None
    capabilities: set[str] = field(default_factory=set)

    def evidence_sources(self) -> tuple[str, ...]:
        return self.evidence if self.evidence is not None else tuple(sorted(self.reasons))


@dataclass(frozen=True)
class CompositionContext:
    """Read-only view a source receives: the frozen input, the active persona and the scoped
    reference plan (D-26)."""

    input: PreparationInput
    active_persona: PersonaInfo | None
    reference_plan: ParticipantDiscoveryPlan
    abort: threading.Event


SourceFn = Callable[[CompositionContext], Iterable[ParticipantCandidate]]


@dataclass(frozen=True)
class SourceRegistration:
    """One participant source. ``grants_mentionable`` is the only way a `discord_user` candidate
    becomes mentionable (D-31)."""

    id: str
    order: int
    run: SourceFn
    grants_mentionable: bool = False
    critical: bool = False
    depends_on: tuple[str, ...] = ()
    core: bool = False


def source_timeout_ms(configured: int | None = None) -> int:
    """D-32: ``configured``, else `PARTICIPANT_SOURCE_TIMEOUT_MS` from ``settings.TOMORI`` (an
    unparsable value is already the default 1500 there); ≤ 0 → 1500."""
    value = int(settings.TOMORI["PARTICIPANT_SOURCE_TIMEOUT_MS"]) if configured is None else configured
    return value if value > 0 else DEFAULT_SOURCE_TIMEOUT_MS


# --------------------------------------------------------------------------------------------
# D-33 plan building
# --------------------------------------------------------------------------------------------


def build_plan(
    candidates: Sequence[ParticipantCandidate],
    *,
    rejections: Mapping[str, int] | None = None,
    alias_diagnostics: Mapping[str, int] | None = None,
) -> ParticipantDiscoveryPlan:
    """D-33: merge candidates (already concatenated in source order) into ordered unique seeds."""
    seeds: dict[ParticipantKey, ParticipantSeed] = {}
    evidence: dict[tuple[ParticipantKey, str], int] = {}
    for order, candidate in enumerate(candidates):
        seed = seeds.get(candidate.key)
        if seed is None:
            seeds[candidate.key] = ParticipantSeed(
                key=candidate.key,
                reasons=set(candidate.reasons),
                aliases=list(candidate.aliases),
                capabilities=set(candidate.capabilities),
                first_seen_order=order,
                source_display_name=candidate.source_display_name or None,
            )
        else:
            seed.reasons |= candidate.reasons
            seed.capabilities |= candidate.capabilities
            seed.aliases.extend(candidate.aliases)
            seed.first_seen_order = min(seed.first_seen_order, order)
            seed.source_display_name = seed.source_display_name or candidate.source_display_name or None
        for source in candidate.evidence_sources():
            evidence.setdefault((candidate.key, source), order)
    plan = ParticipantDiscoveryPlan(
        seeds=sorted(seeds.values(), key=lambda s: s.first_seen_order),
        evidence=sorted(((k, s, o) for (k, s), o in evidence.items()), key=lambda e: e[2]),
    )
    if rejections is not None:
        plan.rejections = {reason: int(rejections.get(reason, 0)) for reason in REJECTION_REASONS}
    if alias_diagnostics is not None:
        plan.alias_reference_diagnostics = dict(alias_diagnostics)
    return plan


# --------------------------------------------------------------------------------------------
# D-25 / D-26 per-persona scoping of the shared result
# --------------------------------------------------------------------------------------------


def scoped_public_profiles(
    profiles: Sequence[PublicPersonaProfile], active_persona: PersonaInfo | None
) -> list[PublicPersonaProfile]:
    """D-25: the shared public persona profiles minus the active persona."""
    active_id = active_persona.persona_id if active_persona else None
    return [p for p in profiles if p.persona_id != active_id]


def synthetic_persona_ids(synthetic_users: Mapping[str, Mapping[str, str]]) -> set[int]:
    """Personas present in ``synthetic_users`` as type persona (historical personas)."""
    ids: set[int] = set()
    for entry_id, entry in synthetic_users.items():
        if entry.get("type") == "persona":
            parsed = parse_persona_id(entry_id)
            if parsed is not None:
                ids.add(parsed)
    return ids


def scope_reference_plan(
    plan: ParticipantDiscoveryPlan,
    *,
    active_persona: PersonaInfo | None,
    public_profiles: Sequence[PublicPersonaProfile],
    synthetic_users: Mapping[str, Mapping[str, str]],
) -> ParticipantDiscoveryPlan:
    """D-26: drop the active persona; historical personas keep their seed without aliases; personas
    without a public profile (after D-25) are dropped; the rest keep only `persona_nickname`. User
    seeds pass unchanged. Evidence of dropped seeds is dropped. Returns a new plan (the shared one
    is cached and must stay untouched)."""
    active_id = active_persona.persona_id if active_persona else None
    historical = synthetic_persona_ids(synthetic_users)
    with_profile = {p.persona_id for p in public_profiles}
    kept: list[ParticipantSeed] = []
    for seed in plan.seeds:
        aliases = list(seed.aliases)
        if seed.key.kind == "persona":
            persona_id = int(seed.key.id)
            if persona_id == active_id:
                continue
            if persona_id in historical:
                aliases = []
            elif persona_id not in with_profile:
                continue
            else:
                aliases = [a for a in aliases if a.source == "persona_nickname"]
        kept.append(replace(seed, reasons=set(seed.reasons), aliases=aliases, capabilities=set(seed.capabilities)))
    kept_keys = {seed.key for seed in kept}
    return ParticipantDiscoveryPlan(
        seeds=kept,
        evidence=[e for e in plan.evidence if e[0] in kept_keys],
        rejections=dict(plan.rejections),
        alias_reference_diagnostics=dict(plan.alias_reference_diagnostics),
    )


# --------------------------------------------------------------------------------------------
# Core sources (D-27..D-30)
# --------------------------------------------------------------------------------------------


def _synthetic_candidate(entry_id: str, entry: Mapping[str, str], active_id: int | None) -> ParticipantCandidate:
    """D-28 (b)/(c) and D-29 display/alias rules of one synthetic entry."""
    label = (entry.get("display_name") or "").strip() or None
    if entry.get("type") == "persona":
        persona_id = parse_persona_id(entry_id)
        if persona_id is None:
            raise ParticipantSourceError("a synthetic persona entry has an unparsable persona id")
        reason = "active_identity" if persona_id == active_id else "historical_persona"
        return ParticipantCandidate(ParticipantKey.persona(persona_id), {reason}, [], label)
    return ParticipantCandidate(
        ParticipantKey.webhook(entry_id),
        {"visible_author"},
        webhook_alias(entry_id, label),
        label,
        evidence=("historical_synthetic",),
    )


def visible_source(ctx: CompositionContext) -> list[ParticipantCandidate]:
    """D-28: visible authors and the active identity."""
    inp = ctx.input
    active = ctx.active_persona
    active_id = active.persona_id if active else None
    bot_id = (inp.bot_user_id or "").strip() or None
    out: list[ParticipantCandidate] = []
    for raw in inp.visible_user_ids:
        user_id = str(raw).strip()
        if not user_id:
            raise ParticipantSourceError("a visible user id is empty")
        if bot_id is not None and user_id == bot_id:
            if user_id in inp.synthetic_users:
                raise ParticipantSourceError("the bot id is also a synthetic user")
            if active is not None and active.is_alter and active_id is not None:
                key = ParticipantKey.persona(active_id)
            else:
                key = ParticipantKey.bot(user_id)
            out.append(ParticipantCandidate(key, {"active_identity"}))
        elif user_id in inp.synthetic_users:
            candidate = _synthetic_candidate(user_id, inp.synthetic_users[user_id], active_id)
            candidate.evidence = None  # a visible author: evidence is its reason (D-28, not D-29)
            out.append(candidate)
        elif (persona_id := typed_persona_id(user_id)) is not None:
            # D-28 (d) in its typed form only: bare digits are a Discord user (e), whatever persona
            # id they spell, so a user whose id is `1` never becomes persona 1 (U-4).
            if persona_id != active_id:
                raise ParticipantSourceError("a persona id is visible without a synthetic entry")
            out.append(ParticipantCandidate(ParticipantKey.persona(persona_id), {"active_identity"}))
        else:
            out.append(ParticipantCandidate(ParticipantKey.discord_user(user_id), {"visible_author"}))
    return out


def synthetic_source(ctx: CompositionContext) -> list[ParticipantCandidate]:
    """D-29: every synthetic entry; personas as `historical_persona`, webhooks as visible authors
    with evidence `historical_synthetic`."""
    out: list[ParticipantCandidate] = []
    for entry_id, entry in ctx.input.synthetic_users.items():
        candidate = _synthetic_candidate(entry_id, entry, None)
        if candidate.key.kind == "persona":
            candidate.evidence = ("historical_persona",)
        out.append(candidate)
    return out


def _plan_candidates(plan: ParticipantDiscoveryPlan, kind: str) -> list[ParticipantCandidate]:
    return [
        ParticipantCandidate(seed.key, set(seed.reasons), list(seed.aliases), seed.source_display_name)
        for seed in plan.seeds
        if seed.key.kind == kind
    ]


def referenced_users_source(ctx: CompositionContext) -> list[ParticipantCandidate]:
    """D-27 `core.referenced-users`: discord_user seeds of the scoped reference plan."""
    return _plan_candidates(ctx.reference_plan, "discord_user")


def matrix_source(ctx: CompositionContext) -> list[ParticipantCandidate]:
    """D-30: every Matrix user, reason `bridge_presence`, alias `bridge_display_name`."""
    return [
        ParticipantCandidate(
            ParticipantKey.matrix_user(matrix_id),
            {"bridge_presence"},
            bridge_alias(matrix_id, name),
            (name or "").strip() or None,
        )
        for matrix_id, name in ctx.input.matrix_users.items()
    ]


def referenced_personas_source(ctx: CompositionContext) -> list[ParticipantCandidate]:
    """D-27 `core.referenced-personas`: persona seeds of the scoped reference plan."""
    return _plan_candidates(ctx.reference_plan, "persona")


CORE_SOURCES: tuple[SourceRegistration, ...] = (
    SourceRegistration("core.visible", 100, visible_source, grants_mentionable=True, critical=True, core=True),
    SourceRegistration("core.synthetic", 200, synthetic_source, critical=True, core=True),
    SourceRegistration(
        "core.referenced-users", 300, referenced_users_source, grants_mentionable=True, critical=True, core=True
    ),
    SourceRegistration("core.matrix", 400, matrix_source, critical=True, core=True),
    SourceRegistration("core.referenced-personas", 500, referenced_personas_source, critical=True, core=True),
)


# --------------------------------------------------------------------------------------------
# Registry (D-27, D-32)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceRegistry:
    """Sources in run order: core sources first (fixed), then extensions ordered by dependencies,
    then numeric order, then id."""

    sources: tuple[SourceRegistration, ...]
    timeout_ms: int = DEFAULT_SOURCE_TIMEOUT_MS


def build_source_registry(
    extensions: Iterable[SourceRegistration] = (), *, timeout_ms: int | None = None
) -> SourceRegistry:
    """D-32: ids case-normalized and unique; unknown dependencies and cycles fail here."""
    ordered = order_registrations(
        extensions,
        error=RegistryError,
        noun="source",
        reserved_ids=frozenset(s.id for s in CORE_SOURCES),
        core=False,
    )
    timeout = source_timeout_ms(timeout_ms)
    return SourceRegistry((*CORE_SOURCES, *ordered), timeout)


def default_source_registry() -> SourceRegistry:
    return build_source_registry()


# --------------------------------------------------------------------------------------------
# Running the sources (D-31, D-32) and composing the plan (D-33)
# --------------------------------------------------------------------------------------------

_EXTENSION_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="participant-source")


def _check_extension(candidates: Sequence[ParticipantCandidate]) -> None:
    """D-32: no `bot` key, no `active_identity`, every alias owned by its candidate."""
    for candidate in candidates:
        if candidate.key.kind == "bot":
            raise ParticipantSourceError("an extension source emitted a bot key")
        if "active_identity" in candidate.reasons:
            raise ParticipantSourceError("an extension source emitted the active_identity reason")
        if any(alias.owner != candidate.key for alias in candidate.aliases):
            raise ParticipantSourceError("an extension source emitted an alias owned by another key")


def _run_extension(registration: SourceRegistration, ctx: CompositionContext, timeout_ms: int) -> list[Any]:
    """An extension source runs in a worker thread under the abort timeout; on timeout the abort
    event is set so a cooperative source can stop, and its late result is ignored."""
    future = _EXTENSION_POOL.submit(lambda: list(registration.run(ctx)))
    try:
        candidates = future.result(timeout=timeout_ms / 1000)
    except FutureTimeout as exc:
        ctx.abort.set()
        raise ParticipantSourceError("participant source timed out") from exc
    _check_extension(candidates)
    return candidates


def _granted(candidate: ParticipantCandidate, registration: SourceRegistration) -> ParticipantCandidate:
    """D-31: capabilities come from the registration only, and only `discord_user` keys get any."""
    granted = {MENTIONABLE} if registration.grants_mentionable and candidate.key.kind == "discord_user" else set()
    return replace(candidate, capabilities=granted)


def compose_plan(
    inp: PreparationInput,
    *,
    active_persona: PersonaInfo | None,
    reference_plan: ParticipantDiscoveryPlan,
    registry: SourceRegistry,
) -> tuple[ParticipantDiscoveryPlan, dict[str, dict[str, Any]]]:
    """D-27..D-33: run every source in registry order and merge. ``reference_plan`` must already be
    scoped (D-26). Returns the plan and per-source outcomes (ids of sources and counts only, D-36).

    Core sources are pure functions over in-memory data with no I/O, so they run inline; the D-32
    abort timeout guards extension sources, the only ones that can block.
    """
    clash = set(inp.synthetic_users) & set(inp.matrix_users)
    if clash:
        raise ParticipantSourceError("an id is both a synthetic user and a Matrix user")  # D-30
    ctx = CompositionContext(inp, active_persona, reference_plan, threading.Event())
    candidates: list[ParticipantCandidate] = []
    outcomes: dict[str, dict[str, Any]] = {}
    for registration in registry.sources:
        try:
            emitted = (
                list(registration.run(ctx))
                if registration.core
                else _run_extension(registration, ctx, registry.timeout_ms)
            )
        except Exception as exc:
            if registration.critical:
                # The message names the source only: an exception text may carry ids or names (D-36).
                raise ParticipantSourceError(f"participant source {registration.id} failed") from exc
            outcomes[registration.id] = {"outcome": _failure_kind(exc), "contributed": 0}
            continue
        candidates.extend(_granted(candidate, registration) for candidate in emitted)
        outcomes[registration.id] = {"outcome": "ok", "contributed": len(emitted)}
    plan = build_plan(
        candidates,
        rejections=reference_plan.rejections,
        alias_diagnostics=reference_plan.alias_reference_diagnostics,
    )
    return plan, outcomes


def _failure_kind(exc: Exception) -> str:
    return "timeout" if isinstance(exc.__cause__, FutureTimeout) else "failed"
