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

from chatcontext.core.config import StageConfig
from chatcontext.core.types import ChatTurnContext
from chatcontext.replay import replay_snapshot
from tests.budgets import database_property
from tests.chatcontext.pipeline.documents import (
    marker,
)
from tests.strategies import channels

_COMPACT_ID = re.compile(r"\b(?:ref|media)_\d+\b")


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
