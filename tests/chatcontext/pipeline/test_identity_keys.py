"""Discord ids and persona ids are two namespaces (participants.md D-03, D-28, U-4/U-5).

A persona's webhook entry carries the internal persona id as its author id, and internal ids are
small numbers; short Discord ids are valid too (tests, bridges), so the pipeline must never read a
Discord user whose id has the digits of a persona id as that persona.
"""

from __future__ import annotations

from typing import Any

from chatcontext.core.config import StageConfig
from chatcontext.core.types import ChatTurnContext, ContextItemTag
from chatcontext.replay import replay_snapshot
from tests.chatcontext.pipeline.documents import MINUTE_MS, PERSONA_HOOK_AUTHOR, START_MS, base_document, message_json
from tests.markers import BOTH


def person(disc_id: str, name: str) -> dict[str, Any]:
    return {"id": disc_id, "username": name.lower(), "global_name": name, "display_name": name, "bot": False}


def channel(*authors: dict[str, Any]) -> dict[str, Any]:
    """Alice (id "1") and Bob (id "2") in a channel with Tomori (the first persona of a replay: id 1)
    and Ellen (id 2); every author says one thing, Alice last."""
    messages = [
        message_json(n, author, f"message {n} from {author['username']}", created_ms=START_MS + n * MINUTE_MS)
        for n, author in enumerate(authors, start=1)
    ]
    doc = base_document([], messages, now_ms=START_MS + 60 * MINUTE_MS)
    doc["users"] = [
        {"disc_id": "1", "username": "alice", "global_name": "Alice", "privacy_level": 0},
        {"disc_id": "2", "username": "bob", "global_name": "Bob", "privacy_level": 0},
    ]
    doc["members"] += [
        {"user_disc_id": "1", "username": "alice", "global_name": "Alice"},
        {"user_disc_id": "2", "username": "bob", "global_name": "Bob"},
    ]
    return doc


def profile(ctx: ChatTurnContext) -> str:
    [item] = [i for i in ctx.context_items if i.metadata_tag == ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION]
    return item.text


def targets(ctx: ChatTurnContext) -> list[str]:
    return [t["serialized_key"] for t in ctx.participant_target_index["targets"]]


@BOTH
def test_d28_a_user_whose_id_is_the_active_persona_id_stays_that_user() -> None:
    ctx = replay_snapshot(channel(person("2", "Bob"), person("1", "Alice")), config=StageConfig(), transcriber=None)
    assert ctx.current_persona.persona_id == 1
    text = profile(ctx)
    assert text.count("(This is you!)") == 1
    assert "Alice" in text and "Bob" in text
    assert {"discord_user:1", "discord_user:2"} <= set(targets(ctx))


@BOTH
def test_u4_a_persona_webhook_and_a_user_with_the_same_digits_are_two_participants() -> None:
    """Ellen (persona 2) speaks through her webhook and Bob's Discord id is "2"."""
    doc = channel(PERSONA_HOOK_AUTHOR, person("2", "Bob"), person("1", "Alice"))
    ctx = replay_snapshot(doc, config=StageConfig(), transcriber=None)
    text = profile(ctx)
    assert "Bob" in text and "Alice" in text and "Ellen" in text
    assert {"discord_user:1", "discord_user:2"} <= set(targets(ctx))
    # The history still names each by their own name.
    assert [e.author_name for e in ctx.simplified_messages] == ["Ellen", "Bob", "Alice"]
