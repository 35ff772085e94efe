"""The context budget (BC13): the assembled prompt plus the reply budget never exceed the endpoint's
context window.

A prompt over its budget is cut in one documented order (build-context.md §13), each cut an entry of
the exclusion log with the reason ``context_budget`` (ids and block names only, never the text):

1. history entries, oldest first; the newest entry (the one being answered) stays;
2. then whole blocks, the lowest priority first (``CUT_ORDER``);
3. and if the prompt is still over (a window too small for the persona's own instructions), the
   longest remaining item is shortened from its end (``context_budget_truncated``).

Counts are ``chatcontext.core.tokens`` estimates (cl100k) scaled by ``scale`` (what the provider reported
over what was counted, ``bot.conversation.budget``) and a safety margin, so a model whose tokenizer
splits text finer than cl100k still fits.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chatcontext.core.tokens import TOKENS_PER_REPLY, count_item, count_text, encoding
from chatcontext.core.types import ChatTurnContext, ContextItem, ContextItemTag, JSONDict, Part, TextPart

BUDGET_REASON = "context_budget"
TRUNCATED_REASON = "context_budget_truncated"

# Blocks cut after the history, first to last. What is not listed (the instructions, the persona,
# the current context, the tail directives, the newest history entry) is only ever shortened.
CUT_ORDER = (
    ContextItemTag.DIALOGUE_SAMPLE,
    ContextItemTag.KNOWLEDGE_STICKERS,
    ContextItemTag.KNOWLEDGE_EMOJIS,
    ContextItemTag.KNOWLEDGE_USER_STATUS,
    ContextItemTag.KNOWLEDGE_SERVER_MEMORIES,
    ContextItemTag.KNOWLEDGE_PERSONA_USER_BLOCKS,
    ContextItemTag.KNOWLEDGE_SERVER_INFO,
    ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION,
)


@dataclass(frozen=True)
class ContextBudget:
    """One endpoint's limits, in the provider's tokens."""

    window: int
    reply_tokens: int
    # Provider tokens per counted token (1.0 until the provider reported a count).
    scale: float = 1.0
    margin_percent: int = 10
    # Tokens sent besides the items (the tools' descriptions).
    reserved: int = 0

    def __post_init__(self) -> None:
        if self.window <= 0 or self.reply_tokens <= 0 or self.reply_tokens >= self.window:
            raise ValueError("a context budget needs a window larger than its reply budget")

    @property
    def prompt_limit(self) -> int:
        return self.window - self.reply_tokens

    def as_json(self) -> JSONDict:
        """The budget as a turn snapshot keeps it (turn-snapshot.md §1, ``turn.budget``)."""
        return dataclasses.asdict(self)

    def estimate(self, counted: int) -> int:
        """Provider tokens of a prompt of ``counted`` tokens, margin included (rounded up)."""
        return math.ceil(counted * self.scale * (100 + self.margin_percent) / 100) + self.reserved


@dataclass(frozen=True)
class FittedPrompt:
    items: list[ContextItem]
    exclusions: list[JSONDict]
    counted_tokens: int  # chatcontext.core.tokens' count of ``items`` (what calibration compares)
    estimated_tokens: int  # the budget's estimate of the same, in provider tokens


def _history_positions(items: Sequence[ContextItem]) -> list[int]:
    """Cuttable history entries, oldest first: all but the newest."""
    history = [i for i, item in enumerate(items) if item.metadata_tag == ContextItemTag.DIALOGUE_HISTORY]
    return history[:-1]


def _cut_order(items: Sequence[ContextItem]) -> list[int]:
    blocks = [i for tag in CUT_ORDER for i, item in enumerate(items) if item.metadata_tag == tag and item.text.strip()]
    return [*_history_positions(items), *blocks]


def _exclusion(item: ContextItem, reason: str) -> JSONDict:
    entry: JSONDict = {"reason": reason, "block": item.metadata_tag.value if item.metadata_tag else "untagged"}
    if item.message_id:
        entry.update(message_id=item.message_id, scope="message")
        sender_id = (item.sender or {}).get("id")
        if sender_id:
            entry["author_id"] = str(sender_id)
    else:
        entry["scope"] = "block"
    return entry


def _shorten(item: ContextItem, drop_tokens: int) -> ContextItem:
    """``item`` without its last ``drop_tokens`` tokens (its media parts kept)."""
    tokens = encoding().encode_ordinary(item.text)
    kept = encoding().decode(tokens[: max(0, len(tokens) - drop_tokens)])
    parts: list[Part] = [TextPart(kept)] if kept else []
    return replace(item, parts=[*parts, *(part for part in item.parts if not isinstance(part, TextPart))])


def fit_to_budget(items: Sequence[ContextItem], budget: ContextBudget) -> FittedPrompt:
    """``items`` cut in the order of the module docstring until their estimate fits the budget."""
    counts = [count_item(item) for item in items]
    total = sum(counts) + TOKENS_PER_REPLY
    kept = list(items)
    removed: set[int] = set()
    exclusions: list[JSONDict] = []
    for position in _cut_order(items):
        if budget.estimate(total) <= budget.prompt_limit:
            break
        removed.add(position)
        total -= counts[position]
        exclusions.append(_exclusion(items[position], BUDGET_REASON))
    truncated: set[int] = set()
    while budget.estimate(total) > budget.prompt_limit:
        left = [i for i in range(len(kept)) if i not in removed and counts[i]]
        if not left:
            break  # nothing left to shorten: only the reserved tokens remain
        position = max(left, key=counts.__getitem__)
        over = budget.estimate(total) - budget.prompt_limit
        drop = max(1, math.ceil(over / (budget.scale * (100 + budget.margin_percent) / 100)))
        if position not in truncated:
            truncated.add(position)
            exclusions.append(_exclusion(kept[position], TRUNCATED_REASON))
        shortened = _shorten(kept[position], drop)
        if count_item(shortened) >= counts[position]:
            # A cut inside a multi-byte character can re-encode no shorter: drop the text instead.
            shortened = _shorten(kept[position], counts[position])
        kept[position] = shortened
        recounted = count_item(shortened)
        total += recounted - counts[position]
        counts[position] = recounted
    fitted = [item for i, item in enumerate(kept) if i not in removed]
    return FittedPrompt(fitted, exclusions, total, budget.estimate(total))


def fit_context(ctx: ChatTurnContext, budget: ContextBudget) -> FittedPrompt:
    """Cut ``ctx``'s prompt to ``budget``, the cuts added to its exclusion log: what the runner does
    after a turn's context is built (``bot.conversation.budget.context_budget`` gives the budget) and
    what its replay does again with the budget its snapshot kept (``chatcontext.replay``), so a cut
    turn replays to its record."""
    fitted = fit_to_budget(ctx.context_items, budget)
    ctx.context_items = fitted.items
    ctx.exclusions = [*ctx.exclusions, *fitted.exclusions]
    return fitted


def count_reserved(texts: Sequence[str]) -> int:
    """Tokens of what a request carries besides its messages (the tools' JSON descriptions)."""
    return sum(count_text(text) for text in texts)
