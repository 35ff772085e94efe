"""A long playground conversation and what each of its requests costs (issue 29): prompt tokens per
turn by block, and the share of each request that repeats the previous request's start (what a
provider's prefix cache can reuse).

Two speakers take turns on the demo server of ``load_demo`` (``make run``): a member mentions the
main persona and the offline echo provider answers, through the playground's whole turn path
(admission, the runner with its remembered history window and context budget, the record). A request
is the chat messages the provider is sent (``bot.conversation.providers.to_chat_messages``), compared
as their JSON bytes, the way a provider compares a request with the cached one.

Imported by ``bench/run_all.py`` (section ``conversation``) and by
``tests/bot/playground/test_prefix_cache.py``, so the README's figure and the test's are one measure.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

JSONDict = dict[str, Any]
# Words of the member's messages: varied, as a chat is, and fixed, so runs compare.
_WORDS = [
    "tea",
    "rain",
    "lamp",
    "tonight",
    "owls",
    "coffee",
    "quiet",
    "moon",
    "library",
    "notes",
    "train",
    "stars",
    "window",
    "jazz",
    "cat",
    "pages",
    "midnight",
    "letters",
    "soup",
    "candles",
    "clock",
    "bridge",
    "river",
    "maps",
    "rooftop",
    "lanterns",
]


def member_line(turn: int) -> str:
    """The member's ``turn``-th message: eight to sixteen words."""
    words = [_WORDS[(turn * 7 + i * 3) % len(_WORDS)] for i in range(8 + turn % 9)]
    return f"message {turn}: " + " ".join(words)


def request_bytes(items: Sequence[JSONDict]) -> bytes:
    """A stored prompt (``PromptRecord.context_items``) as the chat messages a provider receives."""
    messages = [
        {"role": {"model": "assistant"}.get(item["role"], item["role"]), "content": item["text"]}
        for item in items
        if item["text"].strip()
    ]
    return json.dumps(messages, ensure_ascii=False).encode("utf-8")


def prefix_share(previous: bytes, current: bytes) -> float:
    """Share of ``current`` that equals the start of ``previous``."""
    if not current:
        return 0.0
    same = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += 1
    return same / len(current)


@dataclass(frozen=True)
class Turn:
    prompt_tokens: int
    tokens_by_block: dict[str, int]
    prefix_share: float  # of this request against the previous one (0 for the first)
    history_entries: int


def measure(records: Sequence[Any]) -> list[Turn]:
    """Figures of consecutive prompt records of one persona in one channel, oldest first."""
    from chatcontext.core.tokens import count_text

    turns: list[Turn] = []
    previous = b""
    for record in records:
        items = record.context_items
        current = request_bytes(items)
        by_block: dict[str, int] = {}
        for item in items:
            tag = item.get("tag") or "untagged"
            by_block[tag] = by_block.get(tag, 0) + count_text(item["text"])
        history = sum(1 for item in items if item.get("tag") == "dialogue_history")
        turns.append(
            Turn(sum(by_block.values()), by_block, prefix_share(previous, current) if previous else 0.0, history)
        )
        previous = current
    return turns


def converse(post: Callable[[str], Any], turns: int) -> None:
    """``turns`` member messages, each answered before the next (``post`` runs one playground turn)."""
    for turn in range(turns):
        post(member_line(turn))


def summary(figures: Sequence[Turn], *, window: int, steady_from: int) -> JSONDict:
    """The figures the README shows: the conversation's shape, the steady-state prefix share (turns
    from ``steady_from`` on, when the window has long been full) and tokens per turn by block."""
    steady = figures[steady_from:]
    blocks = sorted({tag for turn in steady for tag in turn.tokens_by_block})
    return {
        "turns": len(figures),
        "window_messages": window,
        "steady_turns": len(steady),
        "prefix_share_mean": round(statistics.fmean(t.prefix_share for t in steady), 4),
        "prefix_share_min": round(min(t.prefix_share for t in steady), 4),
        "prefix_share_before_full": round(statistics.fmean(t.prefix_share for t in figures[1 : window // 2]), 4),
        "prompt_tokens_median": round(statistics.median(t.prompt_tokens for t in steady)),
        "prompt_tokens_max": max(t.prompt_tokens for t in steady),
        "tokens_by_block_median": {
            tag: round(statistics.median(t.tokens_by_block.get(tag, 0) for t in steady)) for tag in blocks
        },
        "per_turn": [{"tokens": t.prompt_tokens, "prefix_share": round(t.prefix_share, 4)} for t in figures],
    }
