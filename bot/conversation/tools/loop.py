"""The bounded tool loop of one persona turn: the model asks for calls, the tools answer, the model
is asked again with the answers, at most ``LLM_TOOL_MAX_ROUNDS`` rounds; then the reply is asked for
with ``tool_choice: none``. The reply of record is the final assistant message.

A malformed call — arguments that are not JSON or not the tool's schema, a tool that does not
exist or is not offered on this turn — answers the model with an error result and writes nothing;
a call that takes longer than ``LLM_TOOL_TIMEOUT_SECONDS`` answers a timeout. Every call is kept for
the prompt record (``ToolCallRecord``): name, arguments, result or refusal, rows written. Logs carry
tool names, counts and failure kinds only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from bot.conversation.providers import DeltaSink, GenerationResult, Provider, ToolCall
from bot.conversation.tools.base import Tool, ToolOutcome, ToolTurn
from bot.conversation.tools.notices import Notice
from chatcontext.core.types import ContextItem
from personas.metrics import TOOL_CALLS
from personas.provenance import WrittenRow

logger = logging.getLogger(__name__)

MAX_RECORDED_ARGUMENT_CHARS = 4000


@dataclass(frozen=True)
class ToolCallRecord:
    name: str
    arguments: Any  # the parsed JSON, or the raw text when it did not parse
    status: str  # ok | refused | error
    result: str
    rows: tuple[WrittenRow, ...] = ()
    ms: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "result": self.result,
            "rows": [row.as_json() for row in self.rows],
            "ms": self.ms,
        }


@dataclass(frozen=True)
class ToolLimits:
    """How far a turn's tools may go: ``max_rounds`` rounds of calls (``LLM_TOOL_MAX_ROUNDS``), each
    call at most ``timeout_s`` seconds (``LLM_TOOL_TIMEOUT_SECONDS``)."""

    max_rounds: int
    timeout_s: float


@dataclass
class ToolRun:
    """What the tools did in one turn, besides the reply."""

    offered: list[str] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    rounds: int = 0
    tools_refused: bool = False

    @property
    def written(self) -> list[WrittenRow]:
        return [row for call in self.calls for row in call.rows]

    def as_json(self) -> dict[str, Any]:
        """``PromptRecord.tool_calls``: what was offered, the rounds, whether the provider refused
        the tools (the reply then came from a tool-less call), and every call."""
        return {
            "offered": self.offered,
            "rounds": self.rounds,
            "tools_refused": self.tools_refused,
            "calls": [call.as_json() for call in self.calls],
        }


def _error(name: str, arguments: Any, message: str) -> tuple[ToolCallRecord, ToolOutcome]:
    return ToolCallRecord(name, arguments, "error", f"Error: {message}"), ToolOutcome(result=f"Error: {message}")


async def run_call(
    call: ToolCall,
    tools: dict[str, Tool],
    turn: ToolTurn,
    timeout_s: float,
) -> tuple[ToolCallRecord, ToolOutcome]:
    raw = call.arguments[:MAX_RECORDED_ARGUMENT_CHARS]
    try:
        arguments = json.loads(call.arguments or "{}")
    except (json.JSONDecodeError, RecursionError):  # nested deeper than Python's stack: no arguments either
        return _error(call.name, raw, "the arguments are not valid JSON.")
    tool = tools.get(call.name)
    if tool is None:
        return _error(call.name, arguments, f"there is no tool named {call.name[:64]!r} on this turn.")
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return _error(call.name, arguments, f"invalid arguments ({problems}).")
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            outcome = await tool.run(turn, args)
    except TimeoutError:
        logger.warning("tool %s timed out", call.name)
        return _error(call.name, arguments, "the tool timed out.")
    except Exception as exc:  # a failing tool fails its call, never the turn
        logger.exception("tool %s failed (%s)", call.name, type(exc).__name__)
        return _error(call.name, arguments, "the tool failed.")
    ms = int((time.monotonic() - started) * 1000)
    status = "refused" if outcome.refused else "ok"
    return ToolCallRecord(call.name, arguments, status, outcome.result, outcome.written, ms), outcome


async def generate_with_tools(
    provider: Provider,
    items: Sequence[ContextItem],
    tools: Sequence[Tool],
    turn: ToolTurn,
    run: ToolRun,
    *,
    stream: bool,
    on_delta: DeltaSink | None,
    limits: ToolLimits,
) -> GenerationResult:
    """Generate the reply of record, running the calls the model asks for and keeping them in
    ``run`` as they go; raises ProviderError."""
    by_name = {tool.name: tool for tool in tools}
    specs = [tool.spec() for tool in tools]
    followups: list[dict[str, Any]] = []
    latency = 0
    sink = {"on_delta": on_delta} if on_delta is not None else {}
    while True:
        last_round = run.rounds >= limits.max_rounds
        result = await provider.generate(
            items,
            stream=stream,
            tools=specs,
            followups=followups,
            tool_choice="none" if last_round else "auto",
            **sink,
        )
        latency += result.latency_ms
        run.tools_refused = run.tools_refused or result.tools_refused
        if not result.tool_calls or last_round or result.tools_refused:
            return GenerationResult(result.text, result.usage, latency, (), run.tools_refused)
        run.rounds += 1
        followups.append(
            {
                "role": "assistant",
                "content": result.text or None,
                "tool_calls": [call.as_openai() for call in result.tool_calls],
            }
        )
        for call in result.tool_calls:
            record, outcome = await run_call(call, by_name, turn, limits.timeout_s)
            # The model names the tool: only the registry's names become label values.
            TOOL_CALLS.labels(call.name if call.name in by_name else "unknown", record.status).inc()
            run.calls.append(record)
            if outcome.notice is not None:
                run.notices.append(outcome.notice)
            run.subjects.extend(outcome.subjects)
            followups.append({"role": "tool", "tool_call_id": call.id, "content": outcome.result})
        logger.info("tool round %d: %d call(s)", run.rounds, len(result.tool_calls))
