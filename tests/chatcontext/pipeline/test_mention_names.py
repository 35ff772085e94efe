"""One person, one name per prompt (participants.md R-14, P-07; build-context.md BC7-07).

A user whose saved nickname P-02 allows is named by it in the profile and in the history labels, so
a `<@id>` of them inside anyone's message becomes the saved nickname too; where P-02 forbids it
(blacklist, privacy FULL, personalization off) every place falls back to the live name.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatcontext.core.config import StageConfig
from chatcontext.core.types import ChatTurnContext
from chatcontext.replay import replay_snapshot
from tests.chatcontext.pipeline.documents import BOT_AUTHOR, MINUTE_MS, START_MS, base_document, message_json
from tests.markers import BOTH

ALICE, BOB, CHARLIE = "400000000000000001", "400000000000000002", "400000000000000003"


def person(disc_id: str, name: str) -> dict[str, Any]:
    return {"id": disc_id, "username": name.lower(), "global_name": name, "display_name": name, "bot": False}


def channel() -> dict[str, Any]:
    """Alice saved the nickname "Ally" (server nickname "Alice of Night"); Bob and Tomori mention
    her, Charlie asks."""
    texts = [
        (person(ALICE, "Alice"), "evening all"),
        (person(BOB, "Bob"), f"<@{ALICE}> did you bring the cake?"),
        (BOT_AUTHOR, f"I think <@{ALICE}> did!"),
        (person(CHARLIE, "Charlie"), "tomori, who brought cake?"),
    ]
    messages = [
        message_json(n, author, text, created_ms=START_MS + n * MINUTE_MS)
        for n, (author, text) in enumerate(texts, start=1)
    ]
    doc = base_document([], messages, now_ms=START_MS + 60 * MINUTE_MS)
    doc["users"] = [
        {"disc_id": ALICE, "username": "alice", "global_name": "Alice", "user_nickname": "Ally"},
        {"disc_id": BOB, "username": "bob", "global_name": "Bob"},
        {"disc_id": CHARLIE, "username": "charlie", "global_name": "Charlie"},
    ]
    doc["members"] += [
        {"user_disc_id": ALICE, "username": "alice", "global_name": "Alice", "nickname": "Alice of Night"},
        {"user_disc_id": BOB, "username": "bob", "global_name": "Bob"},
        {"user_disc_id": CHARLIE, "username": "charlie", "global_name": "Charlie"},
    ]
    return doc


def dialogue(ctx: ChatTurnContext) -> dict[str, str]:
    """The text of each history message item, by its Discord message id suffix (1..4)."""
    return {item.message_id[-1]: item.text for item in ctx.context_items if item.message_id}


@BOTH
def test_r14_p07_a_mention_in_a_users_message_uses_the_saved_nickname_the_profile_shows() -> None:
    ctx = replay_snapshot(channel(), config=StageConfig(), transcriber=None)
    said = dialogue(ctx)
    assert said["1"].startswith("Ally: ")  # her own message's label
    assert "Ally did you bring the cake?" in said["2"]  # Bob's mention of her
    assert "I think Ally did!" in said["3"]  # the persona's own message (BC7-07)
    assert not any("Alice of Night" in text for text in said.values())
    profile = next(i.text for i in ctx.context_items if "People taking part" in i.text)
    assert "\nAlly (Mention: @{Alice of Night}" in profile  # the server nickname stays her handle


def _blacklisted(doc: dict[str, Any]) -> None:
    doc["blacklist"] = [{"user_disc_id": ALICE}]


def _full(doc: dict[str, Any]) -> None:
    doc["users"][0]["privacy_level"] = 2


def _personalization_off(doc: dict[str, Any]) -> None:
    doc["server"]["settings"]["personal_memories_enabled"] = False


@pytest.mark.parametrize("mutate", [_blacklisted, _full, _personalization_off])
@BOTH
def test_p07_without_saved_name_use_every_place_uses_the_live_name(mutate: Any) -> None:
    doc = channel()
    mutate(doc)
    ctx = replay_snapshot(doc, config=StageConfig(), transcriber=None)
    assert "Ally" not in "\n".join(item.text for item in ctx.context_items)
    assert "Alice of Night did you bring the cake?" in dialogue(ctx)["2"]
