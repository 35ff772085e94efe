"""Assembly time of this checkout against another commit, under the same conditions.

On a shared machine the absolute figures of two separate `make bench` runs are not comparable: this
2-core VM runs up to 1.7x slower for minutes at a time. This script checks the other commit out into
a temporary git worktree and alternates short runs of the two trees (in ABBA order), one child process per run
(each child uses its own tree's `bench/harness.py` and `chatcontext`), so a slow spell weighs on
both sides alike. Every run assembles the same generated snapshot (`bench/generate.py` is seeded)
with a fresh request scope per turn, like `make bench`.

    .venv/bin/python bench/compare.py 2582518 [--rounds 8] [--turns 8] [--messages 100 --participants 200]

Prints, per tree, the median and minimum wall time over all timed turns, the median CPU time of the
turn's thread (steadier than wall time while other tenants of the machine take its cores), and the
SQL queries per turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs inside the child, with the tree to measure as its only argument.
CHILD = """
import json, sys
tree = sys.argv[1]
sys.path.insert(0, tree + "/bench")
from generate import Shape, generate_snapshot
from harness import assemble, collect, load_turn, rolled_back, scratch_database
shape = Shape(messages=int(sys.argv[2]), participants=int(sys.argv[3]), memories_per_user=int(sys.argv[4]))
with scratch_database(), rolled_back():
    samples = collect(load_turn(generate_snapshot(shape)), runs=int(sys.argv[5]))
print(json.dumps({"wall_ms": [s.wall_ms for s in samples], "cpu_ms": [s.cpu_ms for s in samples],
                  "queries": samples[0].queries}))
"""


def run_tree(tree: Path, args: argparse.Namespace) -> dict[str, object]:
    command = [sys.executable, "-c", CHILD, str(tree)]
    command += [str(v) for v in (args.messages, args.participants, args.memories, args.turns)]
    completed = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        sys.exit(f"the run on {tree} failed:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the commit to compare this checkout with (e.g. main~3)")
    parser.add_argument("--rounds", type=int, default=8, help="alternating runs per tree (default 8)")
    parser.add_argument("--turns", type=int, default=8, help="timed turns per run (default 8)")
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--memories", type=int, default=10, help="personal memories per participant")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tomori-compare-") as scratch:
        other = Path(scratch) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), args.commit], cwd=ROOT, check=True)
        try:
            trees = {args.commit: other, "this checkout": ROOT}
            walls: dict[str, list[float]] = {name: [] for name in trees}
            cpus: dict[str, list[float]] = {name: [] for name in trees}
            queries: dict[str, object] = {}
            for round_number in range(args.rounds):
                print(f"round {round_number + 1}/{args.rounds}", file=sys.stderr, flush=True)
                # ABBA order: whichever tree runs first in a round is not always the same one.
                order = list(trees.items()) if round_number % 2 == 0 else list(reversed(trees.items()))
                for name, tree in order:
                    result = run_tree(tree, args)
                    walls[name] += result["wall_ms"]  # type: ignore[arg-type]
                    cpus[name] += result["cpu_ms"]  # type: ignore[arg-type]
                    queries[name] = result["queries"]
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)

    shape = f"{args.messages} messages x {args.participants} participants x {args.memories} memories"
    print(f"{shape}, {args.rounds} alternating runs of {args.turns} turns per tree")
    print(f"{'tree':<16} {'median ms':>10} {'min ms':>8} {'CPU ms':>8} {'queries':>8}")
    for name, values in walls.items():
        cpu = statistics.median(cpus[name])
        print(f"{name:<16} {statistics.median(values):>10.1f} {min(values):>8.1f} {cpu:>8.1f} {queries[name]!s:>8}")
    base, new = (statistics.median(v) for v in walls.values())
    base_cpu, new_cpu = (statistics.median(v) for v in cpus.values())
    print(f"this checkout / {args.commit}: {new / base:.2f} (CPU {new_cpu / base_cpu:.2f})")


if __name__ == "__main__":
    main()
