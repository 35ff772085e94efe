"""NovelAI memory-only projection (participants.md §7 N-01..N-05; §8 T-50)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.types import PrivacyLevel
from chatcontext.participants.projection import participant_payload
from tests.chatcontext.participants.builders import BO, A
from tests.chatcontext.participants.hydration_builders import build, memory, prepared, user_seed, world_deps


def t50_items():  # type: ignore[no-untyped-def]
    deps = world_deps()
    deps.rows[BO] = replace(deps.rows[BO], privacy_level=PrivacyLevel.PARTIAL)
    deps.memories = [
        memory(1, 1, "content M1", lineage=10001, tags=["cats"], created=300),
        memory(2, 1, "content M2", lineage=0, created=200),
        memory(5, 2, "content M5", lineage=10001, created=400),
    ]
    return build(prepared([user_seed(A), user_seed(BO)]), deps)


def test_t50_n01_n05_projection_of_visible_memories_only():
    items = t50_items()
    projection = items.memory_projection
    assert projection is not None
    assert projection["role"] == "system"
    assert projection["text"] == "content M1\ncontent M2"
    assert [(e["memory_id"], e["owner_key"], e["content"]) for e in projection["entries"]] == [
        (1, f"discord_user:{A}", "content M1"),
        (2, f"discord_user:{A}", "content M2"),
    ]
    assert items.profile.memory_projection is projection
    other = participant_payload(items.profile, novelai=False)
    assert other == [("user", items.profile.text)]
    assert sum(text.count("content M1") for _, text in other) == 1
    assert "content M5" not in items.profile.text


def test_n05_novelai_payload_sends_memories_once_as_system_block():
    items = t50_items()
    payload = participant_payload(items.profile, novelai=True)
    (role_1, profile_text), (role_2, memory_text) = payload
    assert (role_1, role_2) == ("user", "system")
    assert "- Memories:" not in profile_text
    assert memory_text == "content M1\ncontent M2"
    assert sum(text.count("content M1") for _, text in payload) == 1
    assert profile_text == items.profile.text.replace("\n- Memories: ID:1 [tags: cats] content M1; ID:2 content M2", "")


def test_n01_no_projection_without_visible_memories():
    deps = world_deps()
    deps.memories = [memory(5, 2, "bob only", lineage=10001)]
    deps.blacklisted = {BO}
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert items.memory_projection is None
    assert items.profile.memory_projection is None
    assert participant_payload(items.profile, novelai=True) == [("user", items.profile.text)]


def test_n02_n03_projection_content_is_converted_and_newest_first():
    deps = world_deps()
    deps.memories = [
        memory(7, 1, "{user} older", lineage=10001, created=100),
        memory(3, 1, "{user} newer", lineage=10001, created=900),
        memory(4, 2, "{user} bob's", lineage=0, created=500),
    ]
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert items.memory_projection["text"] == "Ally newer\nBob bob's\nAlly older"
