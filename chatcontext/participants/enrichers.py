"""Extension enrichers of participant profiles (participants.md H-20).

Core fields are produced by hydration itself; an extension enricher sees an immutable,
privacy-filtered view (identity, active scope, the *visible* core fields) and may only add fields of
its own `extension:{id}` kinds, ordered after every core field. It cannot touch identity, aliases,
mentionability or core fields, so it can never reveal what hydration hid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from chatcontext.participants.model import (
    ActivePersonaScope,
    HydratedParticipantProfile,
    ParticipantKey,
    ParticipantProfileField,
)
from chatcontext.participants.registry import DEFAULT_TIMEOUT_MS, order_registrations, timeout_ms_from_env

DEFAULT_ENRICHER_TIMEOUT_MS = DEFAULT_TIMEOUT_MS

# H-11/H-20: the core kinds and their orders; anything else from core hydration is dropped.
CORE_FIELD_ORDERS: dict[str, int] = {
    "physical_appearance": 10,
    "naming": 12,
    "identity": 15,
    "timezone": 20,
    "status": 30,
    "presence": 30,
    "roles": 40,
    "personal_memories": 50,
    "human_reminders": 60,
    "persona_public_attributes": 70,
}
CORE_KINDS = frozenset(CORE_FIELD_ORDERS)


class ParticipantEnricherError(Exception):
    """A critical enricher failed, timed out or broke the H-20 contract."""


class EnricherRegistryError(ValueError):
    """Duplicate ids, unknown dependencies or cycles, detected when the registry is built."""


@dataclass(frozen=True)
class EnricherView:
    """H-20: the immutable, privacy-filtered copy an extension enricher receives."""

    key: ParticipantKey
    display_name: str
    reasons: frozenset[str]
    mentionable: bool
    is_bot: bool
    scope: ActivePersonaScope
    fields: tuple[ParticipantProfileField, ...]


@dataclass(frozen=True)
class EnrichedField:
    kind: str
    lines: tuple[str, ...]


EnrichFn = Callable[[EnricherView], Iterable[EnrichedField]]


@dataclass(frozen=True)
class EnricherRegistration:
    id: str
    run: EnrichFn
    order: int = 1000
    critical: bool = False
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnricherRegistry:
    enrichers: tuple[EnricherRegistration, ...] = ()
    timeout_ms: int = DEFAULT_ENRICHER_TIMEOUT_MS


def enricher_timeout_ms(raw: str | None = None) -> int:
    """H-20: `PARTICIPANT_ENRICHER_TIMEOUT_MS`, default 1500; invalid or ≤ 0 → default."""
    return timeout_ms_from_env("PARTICIPANT_ENRICHER_TIMEOUT_MS", raw)


def build_enricher_registry(
    extensions: Iterable[EnricherRegistration] = (), *, timeout_ms: int | None = None
) -> EnricherRegistry:
    """Ids case-normalized and unique; ordered by dependencies, then numeric order, then id."""
    ordered = order_registrations(extensions, error=EnricherRegistryError, noun="enricher")
    timeout = enricher_timeout_ms() if timeout_ms is None else enricher_timeout_ms(str(timeout_ms))
    return EnricherRegistry(tuple(ordered), timeout)


_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="participant-enricher")


def _view(profile: HydratedParticipantProfile, scope: ActivePersonaScope) -> EnricherView:
    return EnricherView(
        key=profile.key,
        display_name=profile.display_name,
        reasons=frozenset(profile.reasons),
        mentionable=profile.mentionable,
        is_bot=profile.is_bot,
        scope=scope,
        fields=tuple(f for f in profile.fields if f.visible and f.kind in CORE_KINDS),
    )


def _run(registration: EnricherRegistration, view: EnricherView, timeout_ms: int) -> list[EnrichedField]:
    future = _POOL.submit(lambda: list(registration.run(view)))
    try:
        emitted = future.result(timeout=timeout_ms / 1000)
    except FutureTimeout as exc:
        raise ParticipantEnricherError("participant enricher timed out") from exc
    prefix = f"extension:{registration.id}"
    for enriched in emitted:
        if not enriched.kind.startswith(prefix):
            raise ParticipantEnricherError("a participant enricher emitted a kind it does not own")
    return emitted


def apply_enrichers(
    profiles: Sequence[HydratedParticipantProfile],
    registry: EnricherRegistry | None,
    scope: ActivePersonaScope,
) -> dict[str, dict[str, Any]]:
    """H-20: add extension fields (orders after the core ones) in place; return per-enricher
    outcomes (counts only). A failing optional enricher contributes nothing to any profile."""
    outcomes: dict[str, dict[str, Any]] = {}
    if registry is None:
        return outcomes
    first_order = max(CORE_FIELD_ORDERS.values()) + 1
    for registration in registry.enrichers:
        added: list[tuple[HydratedParticipantProfile, list[EnrichedField]]] = []
        try:
            for profile in profiles:
                added.append((profile, _run(registration, _view(profile, scope), registry.timeout_ms)))
        except Exception as exc:
            if registration.critical:
                raise ParticipantEnricherError(f"participant enricher {registration.id} failed") from exc
            timed_out = isinstance(exc.__cause__, FutureTimeout)
            outcomes[registration.id] = {"outcome": "timeout" if timed_out else "failed", "contributed": 0}
            continue
        count = 0
        for profile, enriched in added:
            order = max([first_order - 1, *(f.order for f in profile.fields if f.kind not in CORE_KINDS)])
            for item in enriched:
                order += 1
                lines = tuple(item.lines)
                profile.fields.append(
                    ParticipantProfileField(
                        profile.key, item.kind, order, bool(lines), "visible" if lines else "missing_data", lines
                    )
                )
                count += 1
        outcomes[registration.id] = {"outcome": "ok", "contributed": count}
    return outcomes
