"""README.md's Performance figures, rendered from bench/results.json (issue 17).

`make bench` ends by calling ``write_readme``; the section can be rendered again from any results
file without running a benchmark:

    .venv/bin/python bench/report.py bench/results.json [--readme README.md] [--check]

Everything between ``<!-- bench:start -->`` and ``<!-- bench:end -->`` in README.md is this
script's output (``tests/test_bench_report.py`` fails when it is not), so the figures are changed by
running the bench, and the wording by editing this script. The targets are issue 17's, computed
from the results; a figure the run did not measure (no PostgreSQL server, a section left out, a
results file from before a measurement existed) shows as "not measured", never as a guess.

No Django here: rendering must stay cheap enough for a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

JSONDict = dict[str, Any]
HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
START = "<!-- bench:start -->"
END = "<!-- bench:end -->"
NOT_MEASURED = "not measured"

# Issue 17's targets.
POSTGRES_MEDIAN_MS = 30.0
POSTGRES_OVER_SQLITE = 1.5
GROWTH_200_OVER_10 = 2.0
STATEMENTS_PER_TURN = 8
LATER_PERSONA_RATIO = 0.5
CANDIDATE_READ_MS = 10.0
CANDIDATE_READ_USERS = 100_000


@dataclass(frozen=True)
class Target:
    target: str
    measured: str
    met: bool | None  # None: not measured in this run


# ---------------------------------------------------------------------------------------------
# Reading the results
# ---------------------------------------------------------------------------------------------


def _postgresql(results: JSONDict) -> JSONDict:
    """The PostgreSQL child's sections, or {} when the run did not measure PostgreSQL."""
    part = results.get("postgresql") or {}
    return part if part.get("measured") else {}


def _points(run: JSONDict) -> tuple[JSONDict, JSONDict] | None:
    """The assembly at 100 x 10 and 100 x 200 participants (10 memories each)."""
    assembly = run.get("assembly")
    if not assembly:
        return None
    return assembly["comparison_point"], assembly["acceptance_point"]


def _statements(point: JSONDict) -> int:
    queries = point["queries_per_turn"]
    return max(queries) if isinstance(queries, list) else queries


def _later_ratios(run: JSONDict) -> tuple[list[float], list[float]] | None:
    """Per-persona medians (ms) of the 3-persona locked turn and each later persona over the first."""
    scope = run.get("request_scope") or {}
    for count in scope.get("counts", []):
        ratios = count.get("later_over_first", {}).get("each_later_persona")
        if count["personas"] == 3 and ratios is not None:
            return count["shared"]["persona_ms_medians"], ratios
    return None


NICKNAME_ORDER = ("distinct", "name-like")


def _candidate_read(run: JSONDict, users: int, nicknames: str = "distinct") -> float | None:
    for point in (run.get("users_table") or {}).get("points", []):
        if point["users"] == users and point.get("nicknames", "distinct") == nicknames:
            return float(point["median_ms"])
    return None


def _ms(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:.1f} ms"


def _x(value: float) -> str:
    return f"{value:.2f}×"


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------


def targets(results: JSONDict) -> list[JSONDict]:
    """Issue 17's targets with the run's figures (the JSON form ``make bench`` stores)."""
    return [asdict(t) for t in _targets(results)]


def _targets(results: JSONDict) -> list[Target]:
    sqlite, postgresql = _points(results), _points(_postgresql(results))
    out = []
    if postgresql:
        median = postgresql[1]["median_ms"]
        detail = f"{_ms(median)} (min {_ms(postgresql[1]['min_ms'])}, floor {_floor(postgresql[1])})"
        out.append(Target(_PG_MEDIAN, detail, median <= POSTGRES_MEDIAN_MS))
    else:
        out.append(Target(_PG_MEDIAN, NOT_MEASURED, None))
    if postgresql and sqlite:
        ratio = postgresql[1]["median_ms"] / sqlite[1]["median_ms"]
        detail = f"{_x(ratio)} ({_ms(postgresql[1]['median_ms'])} vs {_ms(sqlite[1]['median_ms'])})"
        out.append(Target(_PG_OVER_SQLITE, detail, ratio <= POSTGRES_OVER_SQLITE))
    else:
        out.append(Target(_PG_OVER_SQLITE, NOT_MEASURED, None))
    for name, points in (("SQLite", sqlite), ("PostgreSQL", postgresql)):
        label = f"growth: 200 ÷ 10 participants ≤ {GROWTH_200_OVER_10:.1f} on {name}"
        if points:
            ratio = points[1]["median_ms"] / points[0]["median_ms"]
            detail = f"{_x(ratio)} ({_ms(points[1]['median_ms'])} ÷ {_ms(points[0]['median_ms'])})"
            out.append(Target(label, detail, ratio <= GROWTH_200_OVER_10))
        else:
            out.append(Target(label, NOT_MEASURED, None))
    counts = {
        name: sorted({_statements(p) for p in points})
        for name, points in (("SQLite", sqlite), ("PostgreSQL", postgresql))
        if points
    }
    if counts:
        detail = "; ".join(f"{'/'.join(map(str, c))} on {name}" for name, c in counts.items())
        out.append(Target(_STATEMENTS, f"{detail} (10 and 200 participants)", _all_within(counts, STATEMENTS_PER_TURN)))
    else:
        out.append(Target(_STATEMENTS, NOT_MEASURED, None))
    later = {
        name: found[1]
        for name, run in (("SQLite", results), ("PostgreSQL", _postgresql(results)))
        if (found := _later_ratios(run))
    }
    if later:
        detail = "; ".join(f"{', '.join(_x(r) for r in ratios)} on {name}" for name, ratios in later.items())
        out.append(Target(_LATER, detail, all(r <= LATER_PERSONA_RATIO for v in later.values() for r in v)))
    else:
        out.append(Target(_LATER, NOT_MEASURED, None))
    for nicknames, target in (("distinct", _CANDIDATE), ("name-like", _CANDIDATE_NAME_LIKE)):
        candidate = _candidate_read(_postgresql(results), CANDIDATE_READ_USERS, nicknames)
        on_sqlite = _candidate_read(results, CANDIDATE_READ_USERS, nicknames)
        sqlite_note = f" ({_ms(on_sqlite)} on SQLite)" if on_sqlite is not None else ""
        if candidate is not None:
            out.append(Target(target, f"{_ms(candidate)}{sqlite_note}", candidate <= CANDIDATE_READ_MS))
        else:
            out.append(Target(target, f"{NOT_MEASURED} on PostgreSQL{sqlite_note}", None))
    return out


_PG_MEDIAN = (
    f"PostgreSQL, 100 messages × 200 participants × 10 memories, one persona: median ≤ {POSTGRES_MEDIAN_MS:.0f} ms"
)
_PG_OVER_SQLITE = f"PostgreSQL ≤ {POSTGRES_OVER_SQLITE}× SQLite at the same point, same run"
_STATEMENTS = f"SQL statements per turn ≤ {STATEMENTS_PER_TURN}"
_LATER = f"later personas of a locked turn (3 personas): each ≤ {LATER_PERSONA_RATIO}× the first"
_CANDIDATE = f"D-16 candidate read at {CANDIDATE_READ_USERS:,} users: ≤ {CANDIDATE_READ_MS:.0f} ms on PostgreSQL"
_CANDIDATE_NAME_LIKE = (
    f"the same read with name-like saved nicknames (beside the issue's target): ≤ {CANDIDATE_READ_MS:.0f} ms"
)


def _all_within(counts: dict[str, list[int]], limit: int) -> bool:
    return all(c <= limit for values in counts.values() for c in values)


def _floor(point: JSONDict) -> str:
    floor = point.get("floor")
    return _ms(floor["median_ms"]) if floor else NOT_MEASURED


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _table(header: list[str], align: str, rows: list[list[str]]) -> str:
    """A Markdown table; ``align`` has one letter per column, l(eft) or r(ight)."""
    rule = ["---" if a == "l" else "---:" for a in align]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [header, rule, *rows])


def _f(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _header(results: JSONDict) -> str:
    m = results.get("machine", {})
    commit = (results.get("commit") or "unknown")[:7] + ("+dirty" if "+dirty" in (results.get("commit") or "") else "")
    start, end = m.get("load_average_at_start"), m.get("load_average_at_end")
    load = f"load average {start[0]} at the start" if start else "load average not recorded"
    if end:
        load += f" and {end[0]} at the end"
    sqlite = results.get("database", {}).get("server_version", "SQLite")
    pg = results.get("postgresql") or {}
    if pg.get("measured"):
        postgres = (
            f"**{pg['database']['server_version']}** (a throw-away database on the same machine, in a child process)"
        )
    else:
        postgres = f"PostgreSQL {NOT_MEASURED} ({pg.get('reason', 'the run had no postgresql section')})"
    minutes = results.get("total_seconds", 0) / 60
    quick = " **A `--quick` run: smoke figures, not for comparisons.**" if results.get("quick") else ""
    return (
        f"Every figure below comes from one run of `make bench` (`bench/run_all.py`, {minutes:.1f} minutes) at "
        f"commit `{commit}` on {results.get('generated_at', 'an unrecorded date')[:10]}: "
        f"**{m.get('cpu_count')} cores, {m.get('cpu_model')}, Python {m.get('python')}, Django {m.get('django')}**, "
        f"{load}. Databases: **{sqlite}** (a file in a temporary directory) and {postgres}. "
        "The raw figures are in [`bench/results.json`](bench/results.json), the plots in `bench/results/`; "
        f"this section is generated from them by `bench/report.py`.{quick}"
    )


def _targets_section(results: JSONDict) -> str:
    rows = [[t.target, t.measured, {True: "yes", False: "no", None: "–"}[t.met]] for t in _targets(results)]
    return "### Targets (issue 17)\n\n" + _table(["target", "measured", "met"], "llr", rows)


def _assembly_section(results: JSONDict) -> str | None:
    assembly = results.get("assembly")
    if not assembly:
        return None
    rows = []
    for name, sweep in assembly["sweeps"].items():
        for p in sweep["points"]:
            s = p["shape"]
            floor = p.get("floor")
            rows.append([
                name, str(s["messages"]), str(s["participants"]), str(s["memories_per_user"]),
                _f(p["median_ms"]), _f(p["p95_ms"]), _f(p["min_ms"]),
                _f(floor["median_ms"]) if floor else "–", str(_statements(p)),
            ])  # fmt: skip
    header = ["sweep", "messages", "participants", "memories/user", "median ms", "p95 ms", "min ms", "floor ms",
              "SQL statements"]  # fmt: skip
    parts = [
        "### Assembling a turn",
        "![assembly time and SQL statements per turn](bench/results/assembly.png)",
        f"On SQLite, {assembly['rounds']} pass{'' if assembly['rounds'] == 1 else 'es'} over all points "
        f"({_runs(assembly)} timed turns per point). The floor is the "
        "median time of the same turn's SQL statements, captured with their parameters and replayed on the "
        "raw DB-API cursor (no Django, no pipeline): what the turn would cost if it did nothing but its SQL.",
        _table(header, "lrrrrrrrr", rows),
    ]
    both = _both_databases(results)
    if both:
        parts += [both]
    return "\n\n".join(parts)


def _runs(assembly: JSONDict) -> str:
    return str(assembly["acceptance_point"]["runs"])


def _both_databases(results: JSONDict) -> str | None:
    sqlite, postgresql = _points(results), _points(_postgresql(results))
    if not sqlite:
        return None
    header = ["100 messages × 10 memories", "SQLite median (min) ms", "floor ms"]
    align = "lrr"
    if postgresql:
        header += ["PostgreSQL median (min) ms", "floor ms", "PostgreSQL ÷ SQLite"]
        align += "rrr"
    header.append("SQL statements")
    align += "r"
    rows = []
    for index, participants in enumerate((sqlite[0]["shape"]["participants"], sqlite[1]["shape"]["participants"])):
        row = [f"{participants} participants", _median_min(sqlite[index]), _f_floor(sqlite[index])]
        statements = [str(_statements(sqlite[index]))]
        if postgresql:
            ratio = postgresql[index]["median_ms"] / sqlite[index]["median_ms"]
            row += [_median_min(postgresql[index]), _f_floor(postgresql[index]), _x(ratio)]
            statements.append(str(_statements(postgresql[index])))
        rows.append([*row, " / ".join(statements)])
    growth = ["200 ÷ 10", _x(sqlite[1]["median_ms"] / sqlite[0]["median_ms"]), ""]
    if postgresql:
        growth += [_x(postgresql[1]["median_ms"] / postgresql[0]["median_ms"]), "", ""]
    rows.append([*growth, ""])
    where = (
        f"PostgreSQL in the same run ({results['postgresql']['database']['server_version']}, "
        f"{_runs(results['postgresql']['assembly'])} timed turns per point); statements SQLite / PostgreSQL"
        if postgresql
        else f"PostgreSQL {NOT_MEASURED} in this run"
    )
    return f"The two points of the targets, {where}:\n\n" + _table(header, align, rows)


def _median_min(point: JSONDict) -> str:
    return f"{point['median_ms']:.1f} ({point['min_ms']:.1f})"


def _f_floor(point: JSONDict) -> str:
    floor = point.get("floor")
    return _f(floor["median_ms"]) if floor else "–"


def _later_personas_section(results: JSONDict) -> str | None:
    runs = [(name, _later_ratios(run)) for name, run in (("SQLite", results), ("PostgreSQL", _postgresql(results)))]
    measured = [(name, found) for name, found in runs if found]
    if not measured:
        return None
    header = ["persona of the locked turn"]
    for name, _ in measured:
        header += [f"{name} median ms", "÷ first"]
    rows = []
    for index, label in enumerate(("first", "second", "third")):
        row = [label]
        for _, (medians, ratios) in measured:
            row += [_f(medians[index]), _x(1.0) if index == 0 else _x(ratios[index - 1])]
        rows.append(row)
    return "\n\n".join([
        "### Later personas of a locked turn (3 personas)",
        "Three personas answer one locked turn of 100 messages × 200 participants × 10 memories, one after the "
        "other through the locked turn's request scope and one personalization cache, empty at the start of "
        "each locked turn, as the bot does (`request_scope` in `make bench`); the median whole turn of each "
        "persona over the locked turns, and its ratio to the first persona's.",
        _table(header, "l" + "rr" * len(measured), rows),
    ])  # fmt: skip


def _users_table_section(results: JSONDict) -> str | None:
    sqlite = results.get("users_table")
    if not sqlite:
        return None
    postgresql = _postgresql(results).get("users_table")
    header = ["users in the table", "saved nicknames", "rows read", "median ms (SQLite)"]
    if postgresql:
        header += ["median ms (PostgreSQL)", "users written (PostgreSQL)"]
    points = {(p["users"], p.get("nicknames", "distinct")): p for p in sqlite["points"]}
    pg_points = {(p["users"], p.get("nicknames", "distinct")): p for p in (postgresql or {}).get("points", [])}
    rows = []
    for key in sorted(set(points) | set(pg_points), key=lambda k: (NICKNAME_ORDER.index(k[1]), k[0])):
        point, pg_point = points.get(key), pg_points.get(key)
        shown = point or pg_point or {}
        row = [f"{key[0]:,}", key[1], str(shown.get("rows", "–")), _f(point["median_ms"]) if point else "–"]
        if postgresql:
            row.append(_f(pg_point["median_ms"]) if pg_point else "–")
            row.append(f"{pg_point['write_seconds']:.1f} s" if pg_point and "write_seconds" in pg_point else "–")
        rows.append(row)
    copy_from = (postgresql or {}).get("copy_from")
    written = (
        f" Past {copy_from:,} users PostgreSQL's rows are written with `COPY`; the last column is how long "
        "writing the users added since the previous size took."
        if copy_from
        else ""
    )
    return "\n\n".join([
        "### Database size: the candidate read (D-16)",
        "Every read of a turn is bounded by the channel or the server. Participant discovery's candidate "
        "read (D-16) also selects users *whose saved nickname appears in the history*, and since issue 29 "
        "only among the users the server knows (its members and the authors counted in it), so users of "
        "other servers cost it nothing. `users_table` times that read with the target point's history and "
        "1,000 to 100,000 users of other servers (on PostgreSQL up to 1,000,000), one in "
        f"{round(1 / sqlite['saved_nickname_share'])} with a saved nickname ({sqlite['runs']} reads per size). "
        "*Distinct* nicknames (`other nick 7`) never occur in the history; *name-like* ones (one to three "
        "syllables, sometimes digits) do when they are short, inside the history's words: before issue 29 "
        f"those users were candidates and their rows were read.{written} "
        "[docs/scaling.md](docs/scaling.md) discusses the read.",
        _table(header, "rlrrrr"[: len(header)], rows),
    ])  # fmt: skip


def _conversation_section(results: JSONDict) -> str | None:
    run = results.get("conversation")
    if not run:
        return None
    blocks = sorted(run["tokens_by_block_median"].items(), key=lambda kv: -kv[1])
    rows = [[tag, str(tokens)] for tag, tokens in blocks]
    return "\n\n".join([
        "### A long conversation: tokens per turn and the cacheable prefix",
        f"`conversation` (bench/conversation.py) plays {run['turns']} turns on the demo server through the "
        f"playground's whole turn path (offline echo provider): two speakers, {run['fill_turns']} turns to fill "
        f"the {run['window_messages']}-message window, then {run['steady_turns']} more (history step "
        f"{run['step']}). Hosted providers bill the start of a request that repeats the previous request "
        "cheaper, and local engines skip re-reading it. In steady state a mean "
        f"**{run['prefix_share_mean']:.2f}** of each request repeats the previous request's start (lowest "
        f"{run['prefix_share_min']:.2f}, on the turn the window steps; {run['prefix_share_before_full']:.2f} "
        "while the window fills). The participant profiles keep one order (H-22) and the history moves in "
        "steps (BC2-07a); on main `052c764`, before them, it was 0.42 (issue 29). Prompt tokens (tiktoken "
        f"cl100k) per turn in steady state: median {run['prompt_tokens_median']:,}, at most "
        f"{run['prompt_tokens_max']:,}; by block (median):",
        _table(["block", "tokens"], "lr", rows),
    ])  # fmt: skip


def _request_scope_section(results: JSONDict) -> str | None:
    scope = results.get("request_scope")
    if not scope:
        return None
    rows = []
    for c in scope["counts"]:
        shared, separate = c["shared"], c["separate"]
        rows.append([
            str(c["personas"]), _f(shared["total_ms_median"]), _f(separate["total_ms_median"]),
            f"{c['saved_ms']:.1f} ms ({round(c['saved_percent'])} %)", _f(shared["first_persona_ms_median"]),
            _f(shared["later_persona_ms_median"]),
            f"{_f(shared['first_persona_preparation_ms_median'])} / "
            f"{_f(shared['later_persona_preparation_ms_median'])}",
            f"{shared['discovery_runs_per_locked_turn']:g} vs {separate['discovery_runs_per_locked_turn']:g}",
        ])  # fmt: skip
    header = ["personas", "all turns, one scope (ms)", "all turns, scope per persona (ms)", "saved",
              "first persona (ms)", "each later persona (ms)", "preparation step first / later (ms)",
              "discovery runs"]  # fmt: skip
    counts = ", ".join(str(c["personas"]) for c in scope["counts"])
    return "\n\n".join([
        f"### Request scope ({counts} personas in one locked turn, SQLite)",
        "![request scope](bench/results/request_scope.png)",
        _table(header, "r" * len(header), rows),
        f"The two modes alternate, one locked turn each ({scope['repeats']} per mode). The snapshot has no "
        "persona-specific blocks: a persona that blocks someone sees another history, so its discovery key "
        "differs and it runs discovery itself (C-03).",
    ])  # fmt: skip


def _throughput_section(results: JSONDict) -> str | None:
    throughput = results.get("throughput")
    if not throughput:
        return None
    rows = [
        [str(level["channels"]), _f(level["turns_per_second"]), f"{level['speedup']:.2f}",
         _f(level["median_latency_ms"])]
        for level in throughput["levels"]
    ]  # fmt: skip
    shape = throughput["shape"]
    return "\n\n".join([
        "### Throughput (channels at once, one process, SQLite)",
        "![throughput](bench/results/throughput.png)",
        _table(["channels (threads)", "turns/s", "speedup", "median latency ms"], "rrrr", rows),
        f"Threads, each assembling its own channel ({shape['messages']} messages, {shape['participants']} "
        "participants) on its own connection to the same database, for "
        f"{throughput['seconds_per_level']:g} s per level. The pipeline is synchronous Python, so the threads "
        "share one interpreter lock; more throughput means more bot processes, each owning whole shards: see "
        "[docs/scaling.md](docs/scaling.md).",
    ])  # fmt: skip


def _profile_section(results: JSONDict) -> str | None:
    profile = results.get("profile")
    if not profile:
        return None
    share = profile["database_reads_share"]
    return "\n\n".join([
        "### Where a turn's time goes",
        f"pyinstrument over {profile['turns']} turns at 100 messages × 200 participants on SQLite "
        f"(`{profile['report']}`, written by every run): the database reads (building the statements, the SQL, "
        f"turning rows into value objects) take {_ms(profile['database_reads_cpu_ms'])} of the turn's "
        f"{_ms(profile['turn_cpu_ms'])} of CPU" + ("" if share is None else f" ({share * 100:.0f} %)") + ".",
    ])  # fmt: skip


def _stt_section(results: JSONDict) -> str | None:
    stt = results.get("stt")
    if not stt:
        return None
    head = "### Voice transcription (`bench/stt.py`)"
    if not stt.get("measured"):
        return f"{head}\n\n{NOT_MEASURED}: {stt.get('reason')}"
    rows = [[f"{c['clip_seconds']} s", f"{c['median_s']:.2f}", f"{c['rtf']:.3f}"] for c in stt["clips"]]
    return "\n\n".join([
        head,
        "![speech-to-text real-time factor](bench/results/stt.png)",
        _table(["clip", "median s", "RTF"], "rrr", rows),
        "faster-whisper on the CPU (int8, VAD on), espeak-ng speech re-encoded as OGG/Opus like a Discord voice "
        f"message; RTF = processing time / audio length, {stt['runs_per_clip']} runs per clip after a warm-up.",
    ])  # fmt: skip


def _tool_round_section(results: JSONDict) -> str | None:
    sqlite = results.get("tool_round")
    if not sqlite:
        return None
    postgresql = _postgresql(results).get("tool_round")
    header = ["tool call", "SQLite ms"] + (["PostgreSQL ms"] if postgresql else []) + ["SQL statements"]
    rows = []
    for name, call in sqlite["per_call"].items():
        row = [f"`{name}`", _median_p95(call)]
        if postgresql:
            row.append(_median_p95(postgresql["per_call"][name]))
        rows.append([*row, str(call["queries"])])
    turn = sqlite["per_turn"]
    pg_turn = postgresql["per_turn"] if postgresql else None
    policy_ms = _ms(turn["ms_median"]["tool_policy_load"])
    if pg_turn:
        policy_ms += f" on SQLite, {_ms(pg_turn['ms_median']['tool_policy_load'])} on PostgreSQL"
    return "\n\n".join([
        "### Tool round (`bench/tool_round.py`)",
        "What a persona's tool call costs besides the provider: each tool as the one call of a round through "
        "the runner's loop (`generate_with_tools`), against an in-process provider that asks for the call and "
        f"then answers, on a turn of {sqlite['shape']['messages']} messages and {sqlite['shape']['participants']} "
        "participants. Median (p95) ms outside the provider and SQL statements per call, "
        f"{sqlite['runs']} life cycles (remember → update → forget, set → cancel, react) after two warm-ups:",
        _table(header, "l" + "r" * (len(header) - 1), rows),
        "Per turn that offers tools, whatever it calls: the gating read (`ToolPolicy.load`, "
        f"{turn['queries']['tool_policy_load']} statements, {policy_ms}), the tools' view of the turn "
        f"(`ToolTurn.of`, references from the turn's target index, {turn['queries']['tool_turn_of']} statements, "
        f"{_ms(turn['ms_median']['tool_turn_of'])}) and, when rows were written, pointing them at the prompt "
        f"record (`attach_prompt_record`, {turn['queries']['attach_prompt_record_one_row']} statements for one "
        "row). A memory call's statements are the action's reads (persona, server settings, the user's privacy, "
        "blacklist and block, the user row, the lineage and its limit), the row, its audit-trail row and the "
        "savepoints of two nested transactions; the bench drives the loop from synchronous code through "
        "`async_to_sync`, whose round trip is in every figure — `react`, which touches no database, is that "
        "floor. The second provider request of the round is the provider's time and is not counted."
        + (f" ({sqlite['note']}.)" if sqlite.get("note") else ""),
    ])  # fmt: skip


def _median_p95(call: JSONDict) -> str:
    return f"{call['ms_outside_provider_median']:.1f} ({call['ms_outside_provider_p95']:.1f})"


def _api_section(results: JSONDict) -> str | None:
    api = results.get("api")
    if not api:
        return None
    head = "### API latency (`bench/api.py`)"
    if not api.get("measured"):
        return f"{head}\n\n{NOT_MEASURED}: {api.get('reason')}"
    rows = [
        [f"`{e['endpoint']}`", _f(e["requests_per_second"]), f"{e['p50_ms']:.2f}", f"{e['p99_ms']:.2f}",
         str(e["queries"])]
        for e in api["endpoints"]
    ]  # fmt: skip
    return "\n\n".join([
        head,
        _table(["endpoint", "req/s", "p50 ms", "p99 ms", "SQL queries"], "lrrrr", rows),
        "PostgreSQL with 10 000 prompt records on the token's server, requests through Django's test client in "
        f"one process (one client, sequential, {api['requests_per_figure']} requests per figure).",
    ])  # fmt: skip


def _before_after_section(results: JSONDict) -> str | None:
    opt = results.get("optimization")
    if not opt:
        return None
    before, after = opt["before"], opt["after"]
    return "\n\n".join([
        "### Before the hot-path work",
        "![before and after](bench/results/before_after.png)",
        f"\"Before\" is `bench/baseline.json`: the code before the first round of hot-path work "
        f"(`{(opt['before_commit'] or 'unknown')[:7]}`), measured by the first version of this harness on another "
        f"day, on SQLite: {_ms(before['median_ms'])} median at 100 messages × 200 participants with "
        f"{_statements(before)} statements per turn, against {_ms(after['median_ms'])} with "
        f"{_statements(after)} in this run. Figures of separate runs are not comparable on this machine; "
        "`bench/compare.py` compares two commits under the same conditions.",
    ])  # fmt: skip


SECTIONS: tuple[Callable[[JSONDict], str | None], ...] = (
    _assembly_section,
    _later_personas_section,
    _users_table_section,
    _conversation_section,
    _request_scope_section,
    _throughput_section,
    _profile_section,
    _tool_round_section,
    _stt_section,
    _api_section,
    _before_after_section,
)


def render(results: JSONDict) -> str:
    """The text between the markers (without them), from a results document."""
    parts = [
        "<!-- Generated by bench/report.py from bench/results.json; run the bench or edit the script. -->",
        _header(results),
        _targets_section(results),
    ]
    parts += [text for section in SECTIONS if (text := section(results)) is not None]
    return "\n\n".join(parts)


def section(readme: str) -> str:
    """The text between the markers of ``readme``'s generated section."""
    start, end = readme.index(START) + len(START), readme.index(END)
    return readme[start:end].strip("\n")


def updated(readme: str, results: JSONDict) -> str:
    start, end = readme.index(START) + len(START), readme.index(END)
    return f"{readme[:start]}\n{render(results)}\n{readme[end:]}"


def write_readme(results: JSONDict, path: Path = README) -> None:
    path.write_text(updated(path.read_text(encoding="utf-8"), results), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="?", default=HERE / "results.json")
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--check", action="store_true", help="only say whether the README is up to date")
    args = parser.parse_args()
    results = json.loads(args.results.read_text(encoding="utf-8"))
    if args.check:
        if section(args.readme.read_text(encoding="utf-8")) != render(results):
            sys.exit(f"{args.readme}: the Performance figures differ from {args.results}; run bench/report.py")
        return
    write_readme(results, args.readme)
    print(f"rendered {args.results} into {args.readme}")


if __name__ == "__main__":
    main()
