"""Tokens and cost of a turn (issue 16, item 4).

A record stores a token estimate per prompt block (``records.estimate_tokens``: characters / 4;
no tokenizer whose encoding ships inside a package is a dependency here). When the provider
reported how many prompt tokens it counted, that count is the truth: the per-block estimates are
scaled to add up to it and labelled "measured"; otherwise they stay "estimated". Cost is the
server's operator-set price per million input and output tokens applied to those counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

MEASURED = "measured"
ESTIMATED = "estimated"
COST_PLACES = Decimal("0.000001")


def _count(usage: Mapping[str, Any], key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, Mapping) else None
    # bool is an int; a provider's flag is no count.
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class TurnTokens:
    """Input and output tokens of one turn and whether the provider measured them."""

    input: int
    output: int
    measured: bool

    @property
    def label(self) -> str:
        return MEASURED if self.measured else ESTIMATED


NOTHING = TurnTokens(0, 0, measured=False)


def got_no_answer(*, error: str, reply_text: str) -> bool:
    """The turn failed before any reply (the provider refused, timed out, was unreachable, or said
    nothing): it costs nothing, and a server's totals leave it out (``community.admin.usage``)."""
    return bool(error) and not reply_text


def turn_tokens(usage: Mapping[str, Any], *, prompt_estimate: int, reply_estimate: int) -> TurnTokens:
    """The provider's ``prompt_tokens`` / ``completion_tokens`` when it reported the prompt count,
    else the estimates. A reported prompt count without a completion count keeps the reply's
    estimate for the output: the prompt's figure is still the provider's."""
    prompt = _count(usage, "prompt_tokens")
    if prompt is None:
        return TurnTokens(prompt_estimate, reply_estimate, measured=False)
    completion = _count(usage, "completion_tokens")
    return TurnTokens(prompt, reply_estimate if completion is None else completion, measured=True)


def scale_to(estimates: Sequence[int], total: int) -> list[int]:
    """``estimates`` scaled in proportion to add up to exactly ``total`` (largest remainders get
    the rounding), so a block's measured share is its share of the estimate. All-zero estimates
    share the total evenly."""
    if not estimates:
        return []
    weights = list(estimates) if sum(estimates) > 0 else [1] * len(estimates)
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in by_remainder[: total - sum(shares)]:
        shares[i] += 1
    return shares


def turn_cost(tokens: TurnTokens, *, input_price: Decimal | None, output_price: Decimal | None) -> Decimal | None:
    """Cost of the turn at the given prices per million tokens; None while neither price is set
    (an unpriced model costs "unknown", not zero). An unset one of the two counts as zero."""
    if input_price is None and output_price is None:
        return None
    cost = (tokens.input * (input_price or 0) + tokens.output * (output_price or 0)) / Decimal(1_000_000)
    return cost.quantize(COST_PLACES)
