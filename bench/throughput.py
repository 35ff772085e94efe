"""Turns per second with 1, 2 and 4 channels assembling at the same time.

Each channel is a thread that runs ``build_turn_context`` over and over on its own channel's
snapshot (bench/generate.py ``channel_snapshots``: the channels of one server, sharing its users,
memories and personas) against the same scratch database, each thread on its own database
connection, as the bot's per-channel locks allow. The rows are committed once before the threads
start and the database is flushed afterwards.

The pipeline is synchronous Python, so threads share one interpreter lock: what runs in parallel is
the database's own work (SQLite and the PostgreSQL driver release the lock while a query runs).
More turns per second than one core gives needs more processes (docs/scaling.md).

    .venv/bin/python bench/throughput.py [--seconds 4]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import asdict

from generate import Shape, channel_snapshots
from harness import JSONDict, SnapshotTurn, assemble, load_turn, machine, scratch_database

LEVELS = (1, 2, 4)
SHAPE = Shape(messages=100, participants=20, memories_per_user=10)


def _load_channels(shape: Shape, channels: int) -> list[SnapshotTurn]:
    docs = channel_snapshots(shape, channels)
    first = load_turn(docs[0])
    return [first, *(load_turn(doc, first.loaded) for doc in docs[1:])]


def _run_level(turns: list[SnapshotTurn], seconds: float) -> JSONDict:
    """Every thread assembles its channel's turn until ``seconds`` have passed."""
    from django.db import connection

    counts = [0] * len(turns)
    latencies: list[list[float]] = [[] for _ in turns]
    errors: list[BaseException] = []
    window: list[float] = []  # [start, deadline], set when the last worker has warmed up

    def open_window() -> None:
        now = time.perf_counter()
        window[:] = [now, now + seconds]

    start = threading.Barrier(len(turns), action=open_window)

    def worker(index: int) -> None:
        try:
            assemble(turns[index])  # warm-up on this thread's connection, untimed
            start.wait()
            while time.perf_counter() < window[1]:
                _ctx, sample = assemble(turns[index])
                counts[index] += 1
                latencies[index].append(sample.wall_ms)
        except BaseException as exc:  # reported after the threads are joined
            errors.append(exc)
            start.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,), name=f"channel-{i}") for i in range(len(turns))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    elapsed = time.perf_counter() - window[0]
    all_latencies = sorted(v for per in latencies for v in per)
    total = sum(counts)
    return {
        "channels": len(turns),
        "seconds": round(elapsed, 3),
        "turns": total,
        "turns_per_second": round(total / elapsed, 2),
        "turns_per_channel": counts,
        "median_latency_ms": round(all_latencies[len(all_latencies) // 2], 3) if all_latencies else None,
    }


def measure_throughput(shape: Shape = SHAPE, levels: tuple[int, ...] = LEVELS, seconds: float = 4.0) -> JSONDict:
    """Turns per second for each concurrency level (rows committed on the scratch database, flushed
    after)."""
    from django.core.management import call_command

    turns = _load_channels(shape, max(levels))
    try:
        results = [_run_level(turns[:level], seconds) for level in levels]
    finally:
        call_command("flush", verbosity=0, interactive=False)
    single = results[0]["turns_per_second"]
    for result in results:
        result["speedup"] = round(result["turns_per_second"] / single, 2) if single else None
    return {"shape": asdict(shape), "seconds_per_level": seconds, "levels": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measured seconds per concurrency level")
    args = parser.parse_args()
    with scratch_database() as database:
        result = measure_throughput(seconds=args.seconds)
    print(json.dumps({"database": database, "machine": machine(), **result}, indent=1))


if __name__ == "__main__":
    main()
