"""Time saved by the participant request scope when 1, 3 or 5 personas answer one locked turn
(participants.md C-01..C-09, build-context.md BC10-02).

Every persona of a locked turn runs the whole stage (BC1-02) with its own history pass, hydration
(memories of its own lineage) and rendering; only shared reference discovery is cached in the
request scope of the locked-turn object, so the second and later personas skip it. Two modes over
the same snapshot:

- ``shared``: one locked turn, every persona through ``request_scope_for(locked_turn)`` and one
  personalization cache (``chatcontext.personalization``) as the bot does: the first persona
  computes discovery and reads the user rows and blacklist entries, the others hit both caches. The
  cache starts empty for every locked turn, so the first persona's figure is a cold turn;
  between turns the bot's cache would be warm too.
- ``separate``: every persona with a scope of its own, i.e. what the turn would cost without it.

Reported per persona: the whole turn, the participant stage (preparation, hydration, rendering) and
the preparation step alone (discovery through the scope, then composition), the part the scope
shares; ``later_over_first`` compares each for the second and later personas with the first, and
``each_later_persona`` gives the whole turn of the second, third, … persona over the first's.

The snapshot has no persona-specific blocks: a persona that blocks someone sees a different history,
so its discovery input (and cache key, C-03) differs and it computes discovery again, by design. In
the live bot a later persona also sees the earlier personas' replies in its history when they were
already posted, which changes the key the same way; the scope pays off for personas assembled
before any of them has replied.

    .venv/bin/python bench/request_scope.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any

from generate import Shape, generate_snapshot, with_responders
from harness import JSONDict, SnapshotTurn, assemble, fresh_scope, load_turn, machine, rolled_back, scratch_database

from chatcontext import pipeline, repository
from chatcontext.core.participants.model import PreparedParticipantContext
from chatcontext.participants.scope import request_scope_for
from chatcontext.personalization import PersonalizationCache

COUNTS = (1, 3, 5)


@dataclass(frozen=True)
class Persona:
    """One persona turn of a locked turn: the whole turn, the participant stage (preparation,
    hydration, rendering) and the preparation step alone, in ms; and whether discovery was a hit."""

    turn_ms: float
    participants_ms: float
    preparation_ms: float
    cache_hit: bool


SHAPE = Shape(messages=100, participants=200, memories_per_user=10, personas=5, blocks=False)


@contextmanager
def _timed_preparation() -> Iterator[list[float]]:
    """Records the wall time of each call of the pipeline's participant preparation step (discovery
    through the request scope, then the per-persona composition), the step the scope shares."""
    original = pipeline.prepare_participant_context
    durations: list[float] = []

    def timed(*args: Any, **kwargs: Any) -> PreparedParticipantContext:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            durations.append((time.perf_counter() - started) * 1000)

    pipeline.prepare_participant_context = timed
    try:
        yield durations
    finally:
        pipeline.prepare_participant_context = original


def _locked_turn_run(snap: SnapshotTurn, keys: list[str], *, shared: bool) -> list[Persona]:
    """One locked turn answered by ``keys`` in order."""
    # A new locked-turn object (so a new request scope) planned for exactly these personas.
    ids = tuple(snap.loaded.persona_ids[key] for key in keys)
    locked = replace(snap.turn.locked_turn, triggered_persona_ids=ids)
    out = []
    kept = PersonalizationCache(max_users=100_000, max_servers=4) if shared else None
    with _timed_preparation() as preparation:
        for index, key in enumerate(keys):
            turn = snap.for_persona(key, locked, index)
            scopes = request_scope_for if shared else fresh_scope
            ctx, sample = assemble(snap, turn=turn, scopes=scopes, personalization=kept)
            hit = bool(ctx.diagnostics["participants"].get("discovery_cache_hit"))
            out.append(Persona(sample.wall_ms, sample.stages.get("participants_ms", 0.0), preparation[-1], hit))
    return out


@contextmanager
def _rows_count_as_committed() -> Iterator[None]:
    original = repository.reads_are_committed
    repository.reads_are_committed = lambda: True
    try:
        yield
    finally:
        repository.reads_are_committed = original


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _summary(runs: list[list[Persona]]) -> JSONDict:
    first = [run[0] for run in runs]
    later = [persona for run in runs for persona in run[1:]]
    return {
        "total_ms_median": _median([sum(p.turn_ms for p in run) for run in runs]),
        "first_persona_ms_median": _median([p.turn_ms for p in first]),
        "later_persona_ms_median": _median([p.turn_ms for p in later]),
        "first_persona_participants_ms_median": _median([p.participants_ms for p in first]),
        "later_persona_participants_ms_median": _median([p.participants_ms for p in later]),
        "first_persona_preparation_ms_median": _median([p.preparation_ms for p in first]),
        "later_persona_preparation_ms_median": _median([p.preparation_ms for p in later]),
        "discovery_runs_per_locked_turn": statistics.mean(sum(1 for p in run if not p.cache_hit) for run in runs),
        # The median whole turn of the first, second, … persona, each over the locked turns.
        "persona_ms_medians": [_median([run[i].turn_ms for run in runs]) for i in range(len(runs[0]))],
    }


def measure_request_scope(
    shape: Shape = SHAPE, counts: tuple[int, ...] = COUNTS, repeats: int = 9, warmup: int = 1
) -> JSONDict:
    """For each persona count: both modes, the time the scope saves, and the cost of a later persona
    relative to the first (whole turn, participant stage, preparation step)."""
    doc = with_responders(generate_snapshot(shape), max(counts))
    results = []
    # The snapshot's rows are loaded in a transaction rolled back at the end, which the cache would
    # refuse to keep rows from (a rollback could take them back); nothing else writes to the scratch
    # database meanwhile, so here they count as committed.
    with rolled_back(), _rows_count_as_committed():
        snap = load_turn(doc)
        keys = [p["key"] for p in doc["personas"]]
        for count in counts:
            responders = keys[:count]
            # The modes alternate, so a change in the machine's load weighs on both alike.
            runs: dict[bool, list[list[Persona]]] = {True: [], False: []}
            for repeat in range(warmup + repeats):
                for mode in (True, False):
                    run = _locked_turn_run(snap, responders, shared=mode)
                    if repeat >= warmup:
                        runs[mode].append(run)
            shared, separate = _summary(runs[True]), _summary(runs[False])
            entry: JSONDict = {"personas": count, "shared": shared, "separate": separate}
            if shared["total_ms_median"] is not None and separate["total_ms_median"] is not None:
                entry["saved_ms"] = round(separate["total_ms_median"] - shared["total_ms_median"], 3)
                entry["saved_percent"] = round(100 * entry["saved_ms"] / separate["total_ms_median"], 1)
            if count > 1:
                entry["later_over_first"] = {
                    step: round(shared[f"later_persona_{key}median"] / shared[f"first_persona_{key}median"], 3)
                    for step, key in (
                        ("whole_turn", "ms_"),
                        ("participant_stage", "participants_ms_"),
                        ("preparation_step", "preparation_ms_"),
                    )
                }
                first, *later = shared["persona_ms_medians"]
                entry["later_over_first"]["each_later_persona"] = [round(ms / first, 3) for ms in later]
            results.append(entry)
    return {"shape": asdict(shape), "repeats": repeats, "counts": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="locked turns per persona count and mode")
    args = parser.parse_args()
    with scratch_database() as database:
        result = measure_request_scope(repeats=args.repeats)
    print(json.dumps({"database": database, "machine": machine(), **result}, indent=1))


if __name__ == "__main__":
    main()
