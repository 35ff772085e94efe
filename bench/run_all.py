"""Every benchmark in one run (`make bench`): writes bench/results.json and the plots in bench/results/.

Sections (all by default, or a comma-separated ``--sections`` subset):

- ``assembly``: median/p95 time and SQL queries of ``build_turn_context`` per turn against history
  size (20/50/100 messages at 200 participants), participants (2/10/20/200 at 100 messages) and
  personal memories per user (0/10/50/300 at 100 messages and 20 participants); 10 memories per
  participant unless the sweep varies them. The acceptance point is 100 messages x 200 participants.
  Seven passes over all points (6 timed turns per point and pass), so a slow spell of the machine
  (the shared 2-core VM runs up to 1.7x slower for minutes at a time) spreads over every point.
  Beside every point its floor: one turn's own SQL statements replayed on the raw DB-API cursor.
- ``postgresql``: the same run on PostgreSQL, in a child process (the harness configures Django at
  import): the assembly at the two points of the issue-17 targets (100 messages x 10 and x 200
  participants) with their floors, a locked turn of 3 personas, the users table and the tool round.
  The server is ``BENCH_POSTGRES_URL``, else ``DATABASE_URL`` when it names PostgreSQL, else
  ``postgres://postgres@127.0.0.1:5432/tomori_bench`` (bench/api.py's default); the child works on a
  throw-away ``test_<name>`` database. Recorded as not measured when the server is not reachable.
  Every other section runs on SQLite.
- ``request_scope``: 1, 3 and 5 personas in one locked turn, with and without the shared scope.
- ``throughput``: turns per second with 1, 2 and 4 channels assembling concurrently.
- ``users_table``: the one discovery read whose cost depends on the whole database rather than the
  channel: the D-16 candidate read at 1,000, 10,000 and 100,000 users of other servers in the users
  table (on PostgreSQL also 1,000,000, written with COPY; 10 % with a saved nickname: distinct ones
  the history never holds, then name-like ones),
  with the acceptance point's history text.
- ``conversation``: bench/conversation.py, a long playground conversation (two speakers, 60 turns
  past the demo's 50-message window): prompt tokens per turn by block and the share of each request
  that repeats the previous request's start (what a provider's prefix cache reuses).
- ``profile``: a pyinstrument profile of the acceptance point (bench/results/profile.txt).
- ``stt``: real-time factor of voice transcription (bench/stt.py, run as a subprocess).
- ``tool_round``: the extra cost of a persona's tool round (bench/tool_round.py): ms outside the
  provider and SQL statements per tool call, and the per-turn costs (gating read, target index,
  provenance update).
- ``api``: API requests per second and p50/p99 latency (bench/api.py as a subprocess; recorded as
  not measured when it cannot run, e.g. without a PostgreSQL server).

Snapshots come from bench/generate.py with a fixed seed; the database is a scratch one
(bench/harness.py). ``bench/baseline.json`` holds the same ``assembly`` and ``request_scope``
figures measured before the hot-path optimizations, and is carried into the results as "before".
A full run into bench/results.json ends by regenerating README.md's Performance section from it
(bench/report.py, which also runs alone).

    .venv/bin/python bench/run_all.py [--quick] [--sections assembly,throughput] [--output PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/tomori_bench"
# Set in the environment of the child process that measures PostgreSQL (the ``postgresql`` section).
CHILD_FLAG = "TOMORI_BENCH_POSTGRESQL_CHILD"


def postgres_url() -> str:
    """The PostgreSQL server of the run (see the ``postgresql`` section)."""
    if url := os.environ.get("BENCH_POSTGRES_URL", "").strip():
        return url
    url = os.environ.get("DATABASE_URL", "").strip()
    return url if url.startswith(("postgres://", "postgresql://")) else DEFAULT_POSTGRES_URL


POSTGRES_URL = postgres_url()
IN_POSTGRESQL_CHILD = os.environ.get(CHILD_FLAG) == "1"
# The harness configures Django from DATABASE_URL at import: this process measures SQLite.
if not IN_POSTGRESQL_CHILD:
    os.environ.pop("DATABASE_URL", None)

from generate import Shape, generate_snapshot  # noqa: E402
from harness import (  # noqa: E402
    ROOT,
    JSONDict,
    Sample,
    collect,
    load_turn,
    machine,
    replay_ms,
    rolled_back,
    scratch_database,
    summarize,
    turn_statements,
)
from report import targets, write_readme  # noqa: E402

BENCH = ROOT / "bench"
RESULTS = BENCH / "results.json"
BASELINE = BENCH / "baseline.json"
README = ROOT / "README.md"
PLOTS = BENCH / "results"
# conversation first: load_demo draws persona lineage ids, which the snapshots other sections load and
# roll back leave SQLite's id sequence unable to give.
SECTIONS = (
    "conversation", "assembly", "postgresql", "request_scope", "throughput", "users_table", "profile", "stt",
    "tool_round", "api",
)  # fmt: skip
# What the PostgreSQL child measures, of the sections above.
POSTGRESQL_SECTIONS = ("assembly", "request_scope", "users_table", "tool_round")

ACCEPTANCE = Shape(messages=100, participants=200, memories_per_user=10)
COMPARISON = Shape(messages=100, participants=10, memories_per_user=10)
SWEEPS: dict[str, tuple[str, list[Shape]]] = {
    "messages": ("messages", [Shape(m, 200, 10) for m in (20, 50, 100)]),
    "participants": ("participants", [Shape(100, p, 10) for p in (2, 10, 20, 200)]),
    "memories": ("memories_per_user", [Shape(100, 20, k) for k in (0, 10, 50, 300)]),
}


def log(message: str) -> None:
    where = " postgresql" if IN_POSTGRESQL_CHILD else ""
    print(f"[bench{where} {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


_RESULT_PATHS = (":!bench/results.json", ":!bench/results", ":!README.md")


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        # The previous run's results (and the README section rendered from them) do not make the code dirty.
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *_RESULT_PATHS],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def run_assembly(runs: int, rounds: int, sweeps: dict[str, tuple[str, list[Shape]]] = SWEEPS) -> JSONDict:
    """Every point of the sweeps and the two target points, in ``rounds`` passes over all of them
    (``runs // rounds`` timed turns per point and pass): a burst of load from another process then
    weighs on every point a little instead of on one point a lot. Each pass loads the point's rows
    afresh and rolls them back. Each point's floor: in every pass, one turn's SQL statements replayed
    ``runs // rounds`` times on the raw cursor; its median is the median of those replays."""
    shapes = list(dict.fromkeys([*(s for _, points in sweeps.values() for s in points), ACCEPTANCE, COMPARISON]))
    samples: dict[Shape, list[Sample]] = {shape: [] for shape in shapes}
    floors: dict[Shape, list[float]] = {shape: [] for shape in shapes}
    statements: dict[Shape, int] = {}
    for round_number in range(rounds):
        log(f"assembly pass {round_number + 1}/{rounds} over {len(shapes)} points")
        for shape in shapes:
            with rolled_back():
                snap = load_turn(generate_snapshot(shape))
                samples[shape] += collect(snap, runs=runs // rounds)
                recorded = turn_statements(snap)
                statements[shape] = len(recorded)
                floors[shape] += replay_ms(recorded, runs=runs // rounds)
    summaries = {
        shape: {
            "shape": asdict(shape),
            **summarize(samples[shape]),
            "floor": {
                "statements": statements[shape],
                "median_ms": round(statistics.median(floors[shape]), 3),
                "min_ms": round(min(floors[shape]), 3),
            },
        }
        for shape in shapes
    }
    return {
        "rounds": rounds,
        "sweeps": {
            name: {"parameter": parameter, "points": [summaries[shape] for shape in points]}
            for name, (parameter, points) in sweeps.items()
        },
        "acceptance_point": summaries[ACCEPTANCE],
        "comparison_point": summaries[COMPARISON],
    }


# The stage's database reads: every function that runs a query and turns its rows into value objects.
_READERS = {
    "chatcontext.repository": ("load_user_rows", "load_blacklisted", "load_user_rows_and_blacklist",
                               "load_blocks_and_sprite_labels", "load_emojis_and_stickers",
                               "load_server_memories", "load_naming_preferences",
                               "load_personalization_versions"),
    "chatcontext.participants.prepare": ("load_candidate_rows",),
}  # fmt: skip
_DEPS_READERS = ("load_user_rows", "load_privacy_levels", "load_blacklisted", "load_memories",
                 "load_reminders", "load_naming_preferences")  # fmt: skip


@contextmanager
def _timed_reads() -> Iterator[list[float]]:
    """This thread's CPU time inside the database reads (outermost calls only), while it is open."""
    from chatcontext.participants.loaders import DatabaseHydrationDeps

    spent = [0.0]
    depth = [0]
    patched: list[tuple[object, str, Any]] = []

    def timed(function: Callable[..., Any]) -> Callable[..., Any]:
        def reader(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    spent[0] += time.thread_time() - started

        return reader

    targets: list[tuple[object, str]] = [
        (importlib.import_module(module), name) for module, names in _READERS.items() for name in names
    ]
    targets += [(DatabaseHydrationDeps, name) for name in _DEPS_READERS]
    for owner, name in targets:
        original = getattr(owner, name)
        patched.append((owner, name, original))
        setattr(owner, name, timed(original))
    try:
        yield spent
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


USERS_TABLE_SIZES = (1_000, 10_000, 100_000)
# PostgreSQL goes on to a million users (issue 29): past 100,000 rows they are written with COPY.
POSTGRESQL_USERS_TABLE_SIZES = (*USERS_TABLE_SIZES, 1_000_000)
COPY_FROM = 100_000
# Two kinds of saved nickname for the other servers' users: `distinct` ones ("other nick 7") that the
# history never contains, and `name-like` ones (one to three syllables, sometimes digits, as many
# Discord nicknames are), of which the short ones occur inside the history's words: D-16 is a
# substring test, so those users really are candidates and the read returns their rows.
NICKNAME_KINDS = ("distinct", "name-like")
_SYLLABLES = [c + v for c in "bdghkmnrstyz" for v in "aeiou"] + ["an", "el", "is", "or", "ya", "ki", "ri", "to"]


def _saved_nickname(kind: str, i: int, pick: random.Random) -> str | None:
    if i % 10:
        return None
    if kind == "distinct":
        return f"other nick {i}"
    name = "".join(pick.choice(_SYLLABLES) for _ in range(pick.randint(1, 3)))
    return name + (str(pick.randint(1, 99)) if pick.random() < 0.3 else "")


def _other_users(present: int, total: int, kind: str, pick: random.Random) -> None:
    """Users ``present``..``total`` of other servers: ``bulk_create`` up to ``COPY_FROM``, PostgreSQL's
    ``COPY`` past it (bulk_create would take minutes for a million rows on this machine)."""
    from django.db import connection

    from personas import models as m

    if total <= COPY_FROM or connection.vendor != "postgresql":
        m.DiscordUser.objects.bulk_create(
            [
                m.DiscordUser(
                    user_disc_id=str(600_000_000_000_000_000 + i),
                    username=f"other{i}",
                    user_nickname=_saved_nickname(kind, i, pick),
                )
                for i in range(present, total)
            ],
            batch_size=5_000,
        )
        return
    # Every column of the model, each row its defaults (so a column a later migration adds is written
    # as the ORM would write it) but for the three that vary.
    fields = [f for f in m.DiscordUser._meta.concrete_fields if not f.primary_key]
    template = m.DiscordUser(user_disc_id="", username="")
    defaults = [f.get_db_prep_save(f.pre_save(template, True), connection) for f in fields]
    varying = {
        f.attname: index for index, f in enumerate(fields) if f.attname in ("user_disc_id", "username", "user_nickname")
    }
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    statement = f"COPY {m.DiscordUser._meta.db_table} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for i in range(present, total):
            row = list(defaults)
            row[varying["user_disc_id"]] = str(600_000_000_000_000_000 + i)
            row[varying["username"]] = f"other{i}"
            row[varying["user_nickname"]] = _saved_nickname(kind, i, pick)
            copy.write_row(row)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {m.DiscordUser._meta.db_table}")


def run_users_table(runs: int) -> JSONDict:
    """Median time of the D-16 candidate read as the users table grows with other servers' users
    (every tenth with a saved nickname of each kind); the channel stays the acceptance point's, with
    its members. Also how long writing the users took."""
    from django.db import connection

    from chatcontext.participants.candidates import CandidateQuery, load_candidate_rows
    from personas import models as m

    sizes = POSTGRESQL_USERS_TABLE_SIZES if connection.vendor == "postgresql" else USERS_TABLE_SIZES
    doc = generate_snapshot(ACCEPTANCE)
    text = "\n".join(message["content"] for message in doc["messages"])
    points = []
    for kind in NICKNAME_KINDS:
        pick = random.Random(f"tomori-bench-nicknames-{kind}")
        with rolled_back():
            snap = load_turn(doc)
            server_id = snap.turn.server.server_id
            candidate_ids = tuple(member["user_disc_id"] for member in doc["members"])
            for total in sizes:
                present = m.DiscordUser.objects.count()
                started = time.perf_counter()
                if total > present:
                    log(f"users table: {total} users, {kind} nicknames")
                    _other_users(present, total, kind, pick)
                written_s = time.perf_counter() - started
                query = CandidateQuery(server_id, candidate_ids, text, snap.turn.now_ms)
                timings = []
                for _ in range(runs):
                    started = time.perf_counter()
                    rows = load_candidate_rows(query)
                    timings.append((time.perf_counter() - started) * 1000)
                points.append(
                    {
                        "users": total,
                        "nicknames": kind,
                        "median_ms": round(statistics.median(timings), 3),
                        "rows": len(rows),
                        "write_seconds": round(written_s, 1),
                    }
                )
    return {"runs": runs, "saved_nickname_share": 0.1, "copy_from": COPY_FROM, "points": points}


def run_conversation() -> JSONDict:
    """bench/conversation.py: 25 turns filling the demo's 50-message window, then 60 in steady state,
    through the playground's turn path with the offline echo provider."""
    from asgiref.sync import async_to_sync
    from conversation import converse, measure, summary
    from django.core.management import call_command

    from bot.playground import store
    from bot.playground.service import post_playground_message
    from chatcontext.models import PromptRecord
    from personas.management.commands.load_demo import DEMO_BOT_DISC_ID, DEMO_SERVER_DISC_ID, DEMO_USERS

    window, fill, steady = 50, 25, 60
    # load_demo writes in durable transactions, so not inside rolled_back(): the scratch database goes anyway.
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    server = m_server(DEMO_SERVER_DISC_ID)
    assert server.settings.message_fetch_limit == window
    channel = store.create_channel(server, "bench", topic="A long conversation", now_ms=int(time.time() * 1000))
    speaker = DEMO_USERS["mina"]

    def post(text: str) -> None:
        async_to_sync(post_playground_message)(channel, speaker, f"<@{DEMO_BOT_DISC_ID}> {text}")

    started = time.perf_counter()
    converse(post, fill + steady)
    seconds = time.perf_counter() - started
    records = list(PromptRecord.objects.filter(channel_disc_id=channel.disc_id).order_by("created_at", "pk"))
    figures = summary(measure(records), window=window, steady_from=fill)
    return {**figures, "fill_turns": fill, "seconds": round(seconds, 1), "step": _history_step()}


def m_server(disc_id: str):  # type: ignore[no-untyped-def]
    from personas.models import Server

    return Server.objects.get(server_disc_id=disc_id)


def _history_step() -> int:
    from chatcontext.stage_settings import stage_config

    return stage_config().history_window_step


def run_profile() -> JSONDict:
    """pyinstrument over a few turns of the acceptance point (the text report goes to a file), and
    the share of a turn's CPU time spent in the database reads (query building, SQL, conversion of
    the rows into value objects)."""
    from harness import assemble
    from pyinstrument import Profiler

    turns = 10
    with rolled_back():
        snap = load_turn(generate_snapshot(ACCEPTANCE))
        for _ in range(3):
            assemble(snap)
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for _ in range(turns):
            assemble(snap)
        profiler.stop()
        with _timed_reads() as reads:
            cpu = sum(assemble(snap)[1].cpu_ms for _ in range(turns)) / turns
        read_ms = reads[0] * 1000 / turns
    PLOTS.mkdir(exist_ok=True)
    path = PLOTS / "profile.txt"
    path.write_text(profiler.output_text(unicode=False, color=False, show_all=False), encoding="utf-8")
    return {
        "shape": asdict(ACCEPTANCE),
        "turns": turns,
        "report": str(path.relative_to(ROOT)),
        "turn_cpu_ms": round(cpu, 3),
        "database_reads_cpu_ms": round(read_ms, 3),
        "database_reads_share": round(read_ms / cpu, 3) if cpu else None,
    }


_STT_LINE = re.compile(r"^\s*(\d+)s\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s")
_STT_LOAD = re.compile(r"model load:\s*([\d.]+)s")


def run_stt(runs: int) -> JSONDict:
    """bench/stt.py exposes only a printing main(), so it runs as a subprocess and its table is parsed."""
    command = [sys.executable, str(BENCH / "stt.py"), "--runs", str(runs)]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=420)
    except subprocess.TimeoutExpired:
        return {"measured": False, "reason": "bench/stt.py did not finish within 7 minutes"}
    clips = []
    for line in done.stdout.splitlines():
        if match := _STT_LINE.match(line):
            seconds, median, fastest, rtf = match.groups()
            clips.append(
                {"clip_seconds": int(seconds), "median_s": float(median), "min_s": float(fastest), "rtf": float(rtf)}
            )
    if done.returncode != 0 or not clips:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"measured": False, "reason": f"bench/stt.py exited {done.returncode}: {tail[0][:200]}"}
    load = _STT_LOAD.search(done.stdout)
    return {
        "measured": True,
        "runs_per_clip": runs,
        "model_load_s": float(load.group(1)) if load else None,
        "clips": clips,
        "output": done.stdout.strip().splitlines(),
    }


def run_postgresql(quick: bool) -> JSONDict:
    """The PostgreSQL figures of this run (``POSTGRESQL_SECTIONS``, the assembly at the target points
    only, the locked turn with 3 personas only) from a child process on ``POSTGRES_URL``'s server."""
    import psycopg

    try:
        # Django creates the throw-away database from the server's maintenance database.
        psycopg.connect(POSTGRES_URL, dbname="postgres", connect_timeout=3).close()
    except psycopg.Error as error:
        return {"measured": False, "reason": f"PostgreSQL is not reachable: {str(error).strip()[:200]}"}
    with tempfile.TemporaryDirectory(prefix="tomori-bench-postgresql-") as scratch:
        output = Path(scratch) / "results.json"
        command = [sys.executable, str(BENCH / "run_all.py"), "--sections", ",".join(POSTGRESQL_SECTIONS)]
        command += ["--output", str(output), "--no-plots", *(["--quick"] if quick else [])]
        environment = {**os.environ, "DATABASE_URL": POSTGRES_URL, CHILD_FLAG: "1"}
        try:
            done = subprocess.run(command, cwd=ROOT, env=environment, timeout=900, check=False)
        except subprocess.TimeoutExpired:
            return {"measured": False, "reason": "the PostgreSQL run did not finish within 15 minutes"}
        if done.returncode != 0 or not output.exists():
            return {"measured": False, "reason": f"the PostgreSQL run exited {done.returncode} (its log is above)"}
        child = json.loads(output.read_text(encoding="utf-8"))
    return {
        "measured": True,
        "database": child["database"],
        **{name: child[name] for name in POSTGRESQL_SECTIONS},
        "section_seconds": child["section_seconds"],
    }


_API_LINE = re.compile(r"^(GET \S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$")


def run_api(requests: int) -> JSONDict:
    """bench/api.py (the inspector's API benchmark, PostgreSQL with 10,000 records) configures Django
    itself at import, so it runs as a subprocess and its table is parsed; no figure is invented when
    it cannot run (no PostgreSQL server, for instance)."""
    script = BENCH / "api.py"
    if not script.exists():
        return {"measured": False, "reason": "bench/api.py does not exist"}
    command = [sys.executable, str(script), "--requests", str(requests), "--database-url", POSTGRES_URL]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=420)
    except subprocess.TimeoutExpired:
        return {"measured": False, "reason": "bench/api.py did not finish within 7 minutes"}
    endpoints = []
    for line in done.stdout.splitlines():
        if match := _API_LINE.match(line.strip()):
            label, rps, p50, p99, queries = match.groups()
            endpoints.append(
                {
                    "endpoint": label,
                    "requests_per_second": float(rps),
                    "p50_ms": float(p50),
                    "p99_ms": float(p99),
                    "queries": int(queries),
                }
            )
    if done.returncode != 0 or not endpoints:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"measured": False, "reason": f"bench/api.py exited {done.returncode}: {tail[0][:200]}"}
    return {
        "measured": True,
        "requests_per_figure": requests,
        "endpoints": endpoints,
        "output": done.stdout.strip().splitlines(),
    }


# ---------------------------------------------------------------------------------------------
# Before/after
# ---------------------------------------------------------------------------------------------


def before_after(results: JSONDict) -> JSONDict | None:
    """The acceptance figures now, next to bench/baseline.json (measured before the optimizations)."""
    if not BASELINE.exists() or "assembly" not in results:
        return None
    before = json.loads(BASELINE.read_text(encoding="utf-8"))

    def figures(run: JSONDict) -> JSONDict:
        point = run["assembly"]["acceptance_point"]
        out = {
            "median_ms": point["median_ms"],
            "p95_ms": point["p95_ms"],
            "cpu_median_ms": point["cpu_median_ms"],
            "queries_per_turn": point["queries_per_turn"],
            "stage_median_ms": point["stage_median_ms"],
        }
        scope = run.get("request_scope")
        if scope:
            out["later_over_first"] = {
                str(c["personas"]): c["later_over_first"] for c in scope["counts"] if "later_over_first" in c
            }
        return out

    return {
        "before_commit": before.get("commit"),
        "before_note": before.get("note"),
        "before_load_average": before.get("machine", {}).get("load_average_at_start"),
        "before": figures(before),
        "after": figures(results),
    }


# ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs per point (a smoke test, not for figures)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated subset of {SECTIONS}")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON results")
    parser.add_argument("--no-plots", action="store_true", help="do not draw the PNG plots")
    args = parser.parse_args()
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {sorted(unknown)}")
    runs = 5 if args.quick else 42

    started = time.perf_counter()
    results: JSONDict = {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": machine(),
        "quick": args.quick,
        "runs_per_point": runs,
        "seed": Shape().seed,
    }
    timings: dict[str, float] = {}
    with scratch_database() as database:
        results["database"] = database
        # The PostgreSQL child measures only what the issue-17 targets compare with SQLite.
        steps: dict[str, Callable[[], JSONDict]] = {
            "assembly": lambda: run_assembly(runs, 1 if args.quick else 7, {} if IN_POSTGRESQL_CHILD else SWEEPS),
            "postgresql": lambda: run_postgresql(args.quick),
            "request_scope": lambda: _request_scope(3 if args.quick else 9, only_three=IN_POSTGRESQL_CHILD),
            "throughput": lambda: _throughput(1.0 if args.quick else 4.0),
            "users_table": lambda: run_users_table(3 if args.quick else 15),
            "conversation": run_conversation,
            "profile": run_profile,
            "stt": lambda: run_stt(1 if args.quick else 3),
            "tool_round": lambda: _tool_round(5 if args.quick else 30),
            "api": lambda: run_api(60 if args.quick else 300),
        }
        for name in SECTIONS:
            if name in sections:
                log(f"section {name}")
                step_started = time.perf_counter()
                results[name] = steps[name]()
                timings[name] = round(time.perf_counter() - step_started, 1)
    results["targets"] = targets(results)
    comparison = before_after(results)
    if comparison is not None:
        results["optimization"] = comparison
    results["section_seconds"] = timings
    results["machine"]["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    args.output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {args.output}")
    if not args.no_plots:
        from plots import make_plots

        for path in make_plots(results, PLOTS):
            log(f"wrote {path.relative_to(ROOT)}")
    if args.output.resolve() == RESULTS and not args.quick and set(sections) == set(SECTIONS):
        write_readme(results, README)
        log(f"regenerated the Performance section of {README.relative_to(ROOT)}")
    elif not IN_POSTGRESQL_CHILD:
        log(f"README.md left as it is (a partial or quick run); to render it: bench/report.py {args.output}")
    log(f"done in {results['total_seconds']} s")


def _request_scope(repeats: int, *, only_three: bool) -> JSONDict:
    from request_scope import COUNTS, measure_request_scope

    return measure_request_scope(counts=(3,) if only_three else COUNTS, repeats=repeats)


def _tool_round(runs: int) -> JSONDict:
    from tool_round import measure_tool_round

    return measure_tool_round(runs=runs)


def _throughput(seconds: float) -> JSONDict:
    from throughput import measure_throughput

    return measure_throughput(seconds=seconds)


if __name__ == "__main__":
    main()
