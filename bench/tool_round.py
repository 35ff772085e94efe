"""The extra cost of a tool round (issue 15): what a persona turn spends on its tools outside the
provider, in ms and SQL statements.

One turn of ``SHAPE`` is assembled once; then every tool runs as the one call of a tool round
through the turn runner's own loop (``bot.conversation.tools.loop.generate_with_tools``), against
an in-process provider that asks for the call and then answers, so the provider costs nothing and
the measured time is the loop's: parsing and validating the arguments, the tool (resolving the
person, the ``personas`` action in its transaction, the confirmation), and the second request's
bookkeeping. The tool calls form a life cycle that leaves the database as it found it:
``remember_user_fact`` → ``update_memory`` → ``forget_memory``, ``set_reminder`` →
``cancel_reminder``, and ``react`` (the reaction itself goes to a no-op outlet).

Also per turn, whatever the calls: the gating read (``ToolPolicy.load``), the tool view of the turn
(``ToolTurn.of``: references from the turn's target index) and pointing the written rows at the prompt record
(``attach_prompt_record``, for one written row).

Statement counts include the savepoints of the actions' transactions (the bench runs inside one
rolled-back transaction; a live action has BEGIN/COMMIT instead). The loop is driven from
synchronous code through ``async_to_sync``, whose event-loop round trip (about 3 ms here) is in
every call's time: ``react``, which touches no database, shows that floor.

    .venv/bin/python bench/tool_round.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import DEFAULT_DB_ALIAS, connections
from generate import Shape, generate_snapshot
from harness import (
    JSONDict,
    QueryCounter,
    assemble,
    load_turn,
    machine,
    percentile,
    rolled_back,
    scratch_database,
)

from bot.conversation.providers import GenerationResult, ToolCall
from bot.conversation.tools.base import ToolTurn
from bot.conversation.tools.gating import ToolPolicy
from bot.conversation.tools.loop import ToolLimits, ToolRun, generate_with_tools
from bot.conversation.tools.registry import TOOLS
from personas.models import PersonalMemory
from personas.provenance import WrittenRow, attach_prompt_record

SHAPE = Shape(messages=100, participants=20, memories_per_user=10)
CALLS = ("remember_user_fact", "update_memory", "forget_memory", "set_reminder", "cancel_reminder", "react")


class ScriptedProvider:
    """Asks for one call, then answers; its own time is measured so the loop's can be told apart."""

    name = model_name = "bench"
    supports_tools = True

    def __init__(self, call: ToolCall) -> None:
        self.calls = [call]
        self.provider_s = 0.0

    async def generate(self, items: Sequence[Any], **_: Any) -> GenerationResult:
        started = time.perf_counter()
        result = GenerationResult("", tool_calls=(self.calls.pop(),)) if self.calls else GenerationResult("ok")
        self.provider_s += time.perf_counter() - started
        return result


class NoReactions:
    async def react(self, message_id: str, emoji: str) -> None:
        return None


def counted_db(counter: QueryCounter) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The runner's database seam, counting the statements of every call (they run on this thread:
    the loop is driven through ``async_to_sync``)."""

    def db(fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(counter):
                return fn(*args, **kwargs)

        return sync_to_async(counted, thread_sensitive=True)

    return db


@dataclass(frozen=True)
class CallSample:
    ms_outside_provider: float
    queries: int
    status: str


def one_call(turn: ToolTurn, counter: QueryCounter, name: str, arguments: JSONDict) -> tuple[CallSample, ToolRun]:
    provider = ScriptedProvider(ToolCall(id="call_0", name=name, arguments=json.dumps(arguments)))
    run = ToolRun()
    before = counter.count
    started = time.perf_counter()
    async_to_sync(generate_with_tools)(
        provider, turn.ctx.context_items, list(TOOLS.values()), turn, run,
        stream=False, on_delta=None, limits=ToolLimits(max_rounds=3, timeout_s=30),
    )  # fmt: skip
    elapsed = time.perf_counter() - started - provider.provider_s
    [call] = run.calls
    return CallSample(round(elapsed * 1000, 3), counter.count - before, call.status), run


def life_cycle(turn: ToolTurn, counter: QueryCounter, person: str, ref: str | None) -> dict[str, CallSample]:
    samples: dict[str, CallSample] = {}
    when = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()

    def step(name: str, arguments: JSONDict) -> ToolRun:
        samples[name], run = one_call(turn, counter, name, arguments)
        return run

    memory = step("remember_user_fact", {"user": person, "content": "likes the bench"}).calls[0].rows[0]
    step("update_memory", {"id": f"p{memory.pk}", "content": "loves the bench"})
    step("forget_memory", {"id": f"p{memory.pk}"})
    reminder = step("set_reminder", {"user": person, "purpose": "stretch", "when": when}).calls[0].rows[0]
    step("cancel_reminder", {"id": reminder.pk})
    if ref is not None:
        step("react", {"ref": ref, "emoji": "👍"})
    return samples


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def measure_tool_round(runs: int = 30, shape: Shape = SHAPE) -> JSONDict:
    with rolled_back():
        snap = load_turn(generate_snapshot(shape))
        ctx, _ = assemble(snap)
        counter = QueryCounter()
        db = counted_db(counter)
        turn = ToolTurn.of(db, ctx, NoReactions(), now_ms=int(time.time() * 1000))
        ref = next((key for key in ctx.message_id_map.as_dict() if key.startswith("ref_")), None)
        person = _writable_person(turn, counter)
        by_call: dict[str, list[CallSample]] = {name: [] for name in CALLS}
        for run in range(runs + 2):  # two warm-up cycles
            for name, sample in life_cycle(turn, counter, person, ref).items():
                if run >= 2:
                    by_call[name].append(sample)
        per_turn = _per_turn_costs(ctx, counter, runs)
    calls = {
        name: {
            "ms_outside_provider_median": _median([s.ms_outside_provider for s in samples]),
            "ms_outside_provider_p95": round(percentile([s.ms_outside_provider for s in samples], 95), 3),
            "queries": max(s.queries for s in samples),
            "status": sorted({s.status for s in samples}),
        }
        for name, samples in by_call.items()
        if samples
    }
    return {"shape": asdict(shape), "runs": runs, "per_call": calls, "per_turn": per_turn}


def _writable_person(turn: ToolTurn, counter: QueryCounter) -> str:
    """The first participant a memory may be written about (the snapshot has FULL and blocked ones)."""
    for reference in turn.references:
        sample, run = one_call(turn, counter, "remember_user_fact", {"user": reference.aliases[0], "content": "x"})
        if sample.status == "ok":
            forget = {"id": f"p{run.calls[0].rows[0].pk}"}
            one_call(turn, counter, "forget_memory", forget)
            return reference.aliases[0]
    raise RuntimeError("no participant of the snapshot may be written about")


def _per_turn_costs(ctx: Any, counter: QueryCounter, runs: int) -> JSONDict:
    persona_id = ctx.current_persona.persona_id
    server_id = ctx.turn.server.server_id
    timings: dict[str, list[float]] = {"tool_policy_load": [], "tool_turn_of": []}
    queries: dict[str, int] = {}
    for _ in range(runs):
        with connections[DEFAULT_DB_ALIAS].execute_wrapper(counter):
            before, started = counter.count, time.perf_counter()
            ToolPolicy.load(server_id, persona_id)
            timings["tool_policy_load"].append((time.perf_counter() - started) * 1000)
            queries["tool_policy_load"] = counter.count - before
        started = time.perf_counter()
        ToolTurn.of(counted_db(counter), ctx, NoReactions(), now_ms=0)
        timings["tool_turn_of"].append((time.perf_counter() - started) * 1000)
    memory_pk = PersonalMemory.objects.values_list("pk", flat=True).earliest("pk")  # the fixture wrote some
    with connections[DEFAULT_DB_ALIAS].execute_wrapper(counter):
        before = counter.count
        attach_prompt_record([WrittenRow("personal_memory", memory_pk)], 1)
        queries["attach_prompt_record_one_row"] = counter.count - before
    return {
        "ms_median": {name: _median(values) for name, values in timings.items()},
        "queries": {**queries, "tool_turn_of": 0},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with scratch_database() as database:
        result = {"machine": machine(), "database": database, **measure_tool_round(args.runs)}
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
