"""Time saved by the participant request scope when 1, 3 or 5 personas answer one locked turn
(participants.md C-01..C-09, build-context.md BC10-02).

Every persona of a locked turn runs the whole stage (BC1-02) with its own history pass, hydration
(memories of its own lineage) and rendering; only shared reference discovery is cached in the
request scope of the locked-turn object, so the second and later personas skip it. Two modes over
the same snapshot:

- ``shared``: one locked turn, every persona through ``request_scope_for(locked_turn)`` as the bot
  does (the first persona computes discovery, the others hit the cache);
- ``separate``: every persona with a scope of its own, i.e. what the turn would cost without it.

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
from dataclasses import asdict, replace

from generate import Shape, generate_snapshot, with_responders
from harness import JSONDict, SnapshotTurn, assemble, fresh_scope, load_turn, machine, rolled_back, scratch_database

from chatcontext.participants.scope import request_scope_for

COUNTS = (1, 3, 5)
SHAPE = Shape(messages=100, participants=200, memories_per_user=10, personas=5, blocks=False)


def _locked_turn_run(snap: SnapshotTurn, keys: list[str], *, shared: bool) -> list[tuple[float, float, bool]]:
    """One locked turn answered by ``keys`` in order: (wall ms, participant-stage ms, cache hit) each."""
    # A new locked-turn object (so a new request scope) planned for exactly these personas.
    ids = tuple(snap.loaded.persona_ids[key] for key in keys)
    locked = replace(snap.turn.locked_turn, triggered_persona_ids=ids)
    out = []
    for index, key in enumerate(keys):
        turn = snap.for_persona(key, locked, index)
        ctx, sample = assemble(snap, turn=turn, scopes=request_scope_for if shared else fresh_scope)
        hit = bool(ctx.diagnostics["participants"].get("discovery_cache_hit"))
        out.append((sample.wall_ms, sample.stages.get("participants_ms", 0.0), hit))
    return out


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _mode(snap: SnapshotTurn, keys: list[str], *, shared: bool, repeats: int, warmup: int) -> JSONDict:
    runs = [_locked_turn_run(snap, keys, shared=shared) for _ in range(warmup + repeats)][warmup:]
    first = [run[0] for run in runs]
    later = [persona for run in runs for persona in run[1:]]
    return {
        "total_ms_median": _median([sum(p[0] for p in run) for run in runs]),
        "first_persona_ms_median": _median([p[0] for p in first]),
        "later_persona_ms_median": _median([p[0] for p in later]),
        "first_persona_participants_ms_median": _median([p[1] for p in first]),
        "later_persona_participants_ms_median": _median([p[1] for p in later]),
        "discovery_runs_per_locked_turn": statistics.mean(sum(1 for p in run if not p[2]) for run in runs),
    }


def measure_request_scope(
    shape: Shape = SHAPE, counts: tuple[int, ...] = COUNTS, repeats: int = 9, warmup: int = 1
) -> JSONDict:
    """For each persona count: both modes, the time the scope saves, and the cost of a later persona
    relative to the first (whole turn and participant stage)."""
    doc = with_responders(generate_snapshot(shape), max(counts))
    results = []
    with rolled_back():
        snap = load_turn(doc)
        keys = [p["key"] for p in doc["personas"]]
        for count in counts:
            responders = keys[:count]
            shared = _mode(snap, responders, shared=True, repeats=repeats, warmup=warmup)
            separate = _mode(snap, responders, shared=False, repeats=repeats, warmup=warmup)
            entry: JSONDict = {"personas": count, "shared": shared, "separate": separate}
            if shared["total_ms_median"] is not None and separate["total_ms_median"] is not None:
                entry["saved_ms"] = round(separate["total_ms_median"] - shared["total_ms_median"], 3)
                entry["saved_percent"] = round(100 * entry["saved_ms"] / separate["total_ms_median"], 1)
            if count > 1:
                entry["later_over_first"] = round(
                    shared["later_persona_ms_median"] / shared["first_persona_ms_median"], 3
                )
                entry["later_over_first_participants"] = round(
                    shared["later_persona_participants_ms_median"] / shared["first_persona_participants_ms_median"], 3
                )
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
