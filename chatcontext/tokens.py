"""The provider-neutral token estimate: records, the inspector and lorebook budgets count with it."""

from __future__ import annotations

import math


def estimate_tokens(text: str) -> int:
    """One token per four characters, rounded up."""
    return math.ceil(len(text) / 4)
