"""Request-scope caching of shared reference discovery across the persona turns of one locked turn
(participants.md C-01..C-09, build-context.md BC10-02/BC10-03).

The pipeline is synchronous; concurrent persona turns are threads. The first caller of a key stores
a ``concurrent.futures.Future`` *before* computing, later callers wait on it (C-05); a failed future
is evicted if it is still the current entry, and the error reaches every waiter (C-06).
"""

from __future__ import annotations

import json
import pickle
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from chatcontext.core.participants.model import PreparationInput
from chatcontext.participants.discovery import SharedDiscovery


@dataclass(frozen=True)
class CachedDiscovery:
    """C-04: the D-24 shared result plus how long it took (its external calls ride inside)."""

    shared: SharedDiscovery
    duration_ms: float


class ParticipantRequestScope:
    """One per locked turn (C-01). Other callers (prompt snapshot, cost inspection, hidden image
    turns) create their own, so nothing is reused across locked turns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Future[CachedDiscovery]] = {}

    def get_or_compute(self, key: str, compute: Callable[[], CachedDiscovery]) -> tuple[CachedDiscovery, bool]:
        """The cached value for ``key`` and whether it was a hit (including waiting on in-flight work)."""
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if future is None:
                future = Future()
                self._entries[key] = future  # C-05: stored before any work starts
        if not owner:
            return future.result(), True
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                if self._entries.get(key) is future:  # C-06: a newer entry is left alone
                    del self._entries[key]
            future.set_exception(exc)
            raise
        future.set_result(value)
        return value, False

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


_SCOPES: weakref.WeakKeyDictionary[object, ParticipantRequestScope] = weakref.WeakKeyDictionary()
_SCOPES_LOCK = threading.Lock()


def request_scope_for(locked_turn: object) -> ParticipantRequestScope:
    """C-01: the scope of a locked-turn *object* (identity, not equality), created lazily and held
    weakly so it is collected with the locked turn."""
    with _SCOPES_LOCK:
        scope = _SCOPES.get(locked_turn)
        if scope is None:
            scope = ParticipantRequestScope()
            _SCOPES[locked_turn] = scope
        return scope


def freeze_input(inp: PreparationInput) -> PreparationInput:
    """C-02: a deep copy taken before anything else, so later caller mutation cannot reach running
    or cached discovery. Id collections become plain lists/dicts in their given order."""
    # A pickle round trip deep-copies this plain data (dataclasses, lists, dicts, strings) at a
    # third of the cost of copy.deepcopy, which dominated preparation on long histories.
    frozen: PreparationInput = pickle.loads(pickle.dumps(inp, pickle.HIGHEST_PROTOCOL))
    return replace(
        frozen,
        simplified_history=list(frozen.simplified_history),
        personas=list(frozen.personas),
        visible_user_ids=[str(v) for v in frozen.visible_user_ids],
        synthetic_users={str(k): dict(v) for k, v in frozen.synthetic_users.items()},
        matrix_users={str(k): str(v) for k, v in frozen.matrix_users.items()},
        responder_persona_ids=[int(v) for v in frozen.responder_persona_ids],
    )


def discovery_cache_key(inp: PreparationInput) -> str:
    """C-03: exact, order-preserving canonical JSON (no hashing) of the discovery inputs. The active
    persona is deliberately not part of it."""
    payload: list[Any] = [
        inp.guild_id,
        [[e.id, e.author_id, e.author_type, e.content] for e in inp.simplified_history],
        list(inp.visible_user_ids),
        [[k, v] for k, v in inp.synthetic_users.items()],
        [[k, v] for k, v in inp.matrix_users.items()],
        [
            [
                p.persona_id,
                p.persona_nickname,
                list(p.trigger_words),
                [[a.text, a.is_public] for a in p.attributes],
                list(p.physical_appearance_tags),
            ]
            for p in inp.personas
        ],
        list(inp.responder_persona_ids),
    ]
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
