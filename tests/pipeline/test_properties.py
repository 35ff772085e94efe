"""Properties of whole-pipeline assembly over generated channels (build-context.md §2–§5, §8).

Each example is a valid turn snapshot replayed through `replay_snapshot` (scratch database, rolled
back): privacy-FULL and blocked authors never leak text into the prompt, every compact id resolves,
merge bookkeeping keeps one id and one timestamp per original message, and a manual prefill is the
last item.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.config import StageConfig
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import validate_snapshot
from chatcontext.types import ChatTurnContext
from tests.budgets import database_property
from tests.pipeline.documents import (
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

_COMPACT_ID = re.compile(r"\b(?:ref|media)_\d+\b")


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


def all_texts(ctx: ChatTurnContext) -> list[str]:
    return [item.text for item in ctx.context_items]


@pytest.mark.django_db(databases=["default", "replay"])
@database_property
@given(channels())
def test_whole_pipeline_invariants(channel: tuple[dict[str, Any], set[int], int]) -> None:
    """BC2-10, BC2-12, U-1, U-2 (no hidden author's text), BC5-05 (compact ids resolve), BC4-02,
    BC4-04 (merge bookkeeping), BC8-12, BC8-15 (the prefill is last)."""
    doc, hidden, trigger = channel
    ctx = replay_snapshot(doc, config=StageConfig(), transcriber=None)
    texts = all_texts(ctx)
    prompt = "\n".join(texts)

    # BC2-10 / U-1 / U-2: no text of a privacy-FULL or blocked author anywhere in the prompt.
    leaked = [n for n in hidden if re.search(rf"\b{marker(n)}\b", prompt)]
    assert not leaked
    assert re.search(rf"\b{marker(trigger)}\b", prompt)  # the search itself finds visible text

    # BC5-05: every compact id the model can see resolves to a real message.
    id_map = ctx.message_id_map
    assert all(id_map.resolve(key) is not None for key in _COMPACT_ID.findall(prompt))

    # BC4-02/04: one id and one timestamp per original message, lists parallel, nothing counted twice.
    created = {m["id"]: m["created_timestamp"] for m in doc["messages"]}
    seen: list[str] = []
    for entry in ctx.simplified_messages:
        if entry.combined_message_ids is None:
            seen.append(entry.id)
            continue
        ids = entry.combined_message_ids
        assert ids[0] == entry.id and len(ids) >= 2
        assert entry.individual_contents is not None and len(entry.individual_contents) == len(ids)
        assert entry.combined_created_ats == [created[i] for i in ids]
        assert entry.content == "\n".join(entry.individual_contents)
        seen.extend(ids)
    real = [i for i in seen if i in created]
    assert len(real) == len(set(real))
    assert all(i in created or i.startswith("synthetic-") for i in seen)

    # BC8-12g / BC8-15: a manual prefill is the very last item, as the persona's own words.
    prefill = (doc["turn"].get("manual_prefill") or "").strip()
    if prefill:
        last = ctx.context_items[-1]
        assert (last.role, last.text) == ("model", f"Tomori: {prefill}")
    else:
        assert ctx.context_items[-1].role == "user"
