"""Hypothesis strategies more than one test module draws from."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from chatcontext.snapshot import validate_snapshot
from tests.chatcontext.pipeline.documents import (
    BOT_AUTHOR,
    MINUTE_MS,
    PERSONA_HOOK_AUTHOR,
    START_MS,
    WORDS,
    SyntheticUser,
    author_json,
    base_document,
    marker,
    message_json,
)


@st.composite
def channels(draw: st.DrawFn) -> tuple[dict[str, Any], set[int], int]:
    """A snapshot, the numbers of the messages whose text must never reach the prompt, and the
    number of the trigger (always a visible user's)."""
    others = [
        SyntheticUser(
            n,
            privacy_level=draw(st.sampled_from((0, 1, 2))),
            blocked=draw(st.booleans()),
            blacklisted=draw(st.booleans()),
        )
        for n in range(2, 2 + draw(st.integers(1, 4)))
    ]
    users = [SyntheticUser(1), *others]  # the triggerer is always a visible user
    hidden_ids = {u.id for u in users if u.privacy_level == 2 or u.blocked}
    count = draw(st.integers(1, 24))
    messages = []
    hidden: set[int] = set()
    clock = START_MS
    for n in range(1, count + 1):
        # Same-minute, minute and next-day gaps exercise the merge and its day boundary.
        clock += draw(st.sampled_from((0, 1, 1, 5, 24 * 60))) * MINUTE_MS
        pick = draw(st.integers(0, len(users) + 1)) if n < count else 0
        author = (
            BOT_AUTHOR if pick == len(users) else PERSONA_HOOK_AUTHOR if pick > len(users) else author_json(users[pick])
        )
        if author["id"] in hidden_ids:
            hidden.add(n)
        words = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=4)))
        messages.append(
            message_json(
                n,
                author,
                f"{words} {marker(n)}".strip(),
                created_ms=clock,
                reply_to=draw(st.none() | st.integers(1, n - 1)) if n > 1 else None,
                image=draw(st.booleans()) if n % 3 == 0 else False,
                reactions=[
                    {"emoji": {"id": None, "name": "👍"}, "count": 1, "users": [draw(st.sampled_from(users)).id]}
                ]
                if draw(st.booleans())
                else None,
            )
        )
    prefill = draw(st.none() | st.sampled_from(("Well,", "  Hm  ", "So", "   ")))
    doc = base_document(
        users,
        messages,
        now_ms=messages[-1]["created_timestamp"] + 10 * MINUTE_MS,
        is_from_queue=draw(st.booleans()),
        manual_prefill=prefill,
    )
    return validate_snapshot(doc), hidden, count
