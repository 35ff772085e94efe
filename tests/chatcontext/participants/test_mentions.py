"""Mention conversion (participants.md R-14, R-15, P-07; §8 T-33 channel label, T-36 live name)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.participants.mentions import (
    MentionDirectory,
    MentionTarget,
    convert_mentions,
    extend_directory,
    mention_ids,
)
from chatcontext.core.types import MemberInfo
from tests.chatcontext.participants.builders import BO, CHANNEL, A, B, E, G
from tests.chatcontext.participants.hydration_builders import (
    all_item_text,
    build,
    memory,
    prepared,
    user_seed,
    world_deps,
)

OUTSIDER = "400000000000000031"


def directory() -> MentionDirectory:
    return MentionDirectory(
        bot_user_id=B,
        users={
            A: MentionTarget(saved_nickname="Ally", server_nickname="alice_srv", username="alice01"),
            BO: MentionTarget(username="bob"),
        },
        channels={CHANNEL: "#general"},
        roles={"77": "Mod"},
    )


def convert(text: str, *, personalization: bool = True) -> str:
    return convert_mentions(
        text,
        "Ally",
        "Tomori",
        personalization,
        directory=directory(),
        triggerer_formatted_name="Lady Ally",
        triggerer_address_term="my lady",
    )


def test_r14_user_mentions_prefer_bot_then_saved_nickname_then_server_nickname_then_username():
    assert convert(f"<@{B}> and <@!{A}> and <@{BO}>") == "Tomori and Ally and bob"
    assert convert(f"<@{A}>", personalization=False) == "alice_srv"
    assert convert(f"<@{E}> stays") == f"<@{E}> stays"


def test_r14_channels_roles_and_permalinks():
    assert convert(f"see https://discord.com/channels/{G}/{CHANNEL} now") == "see #general now"
    link = f"https://discord.com/channels/{G}/{CHANNEL}/500000000000000001"
    assert convert(link) == link  # a message permalink is not a channel permalink
    assert convert("https://discord.com/channels/1/999") == "<#999>"
    assert convert(f"<#{CHANNEL}> <#999> <@&77> <@&78>") == "#general <#999> @Mod <@&78>"


def test_r14_placeholders_single_and_double_braces():
    assert convert("{bot} {{char}} {user} {{user}} {user_formatted} {user_term} {BOT}") == (
        "Tomori Tomori Ally Ally Lady Ally my lady Tomori"
    )
    assert convert("ping @{user} or @{bot}") == "ping @{user} or @{bot}"
    assert convert("no tokens at all: {other} <@abc>") == "no tokens at all: {other} <@abc>"


def test_r14_replacements_are_never_converted_again():
    tricky = MentionDirectory(users={A: MentionTarget(saved_nickname="{bot}")})
    assert convert_mentions(f"<@{A}> says {{user}}", "U", "Tomori", True, directory=tricky) == "{bot} says U"


def test_r14_default_user_binding():
    assert convert_mentions("{user}", None, "Tomori", True, directory=MentionDirectory()) == "User"


def test_extend_directory_uses_live_names_only_for_non_participants():
    class Lookups:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def load_member(self, disc_id: str) -> MemberInfo | None:
            self.asked.append(disc_id)
            if disc_id == OUTSIDER:
                return MemberInfo(OUTSIDER, username="outsider", nickname="Outie")
            if disc_id == B:
                return MemberInfo(B, username="tomori-bot", display_name="Tomori (bot)", is_bot=True)
            raise RuntimeError("gateway error")

        def channel_label(self, channel_id: str) -> str | None:
            return "#tasks" if channel_id == "555" else None

        def role_name(self, role_id: str) -> str | None:
            return None

    lookups = Lookups()
    found = directory()
    texts = [f"<@{OUTSIDER}> <@{E}> <@{A}> <@{B}> <#555> <#556> <@&9>"]
    assert mention_ids(texts) == ({OUTSIDER, E, A, B}, {"555", "556"}, {"9"})
    extend_directory(found, texts, lookups)
    extend_directory(found, texts, lookups)  # known and unknown ids are not asked twice
    assert sorted(lookups.asked) == sorted([OUTSIDER, E, B])
    assert found.users[OUTSIDER] == MentionTarget(None, "Outie", "outsider")
    assert convert_mentions(texts[0], "Ally", "Tomori", True, directory=found) == (
        f"Outie <@{E}> Ally Tomori (bot) #tasks <#556> <@&9>"  # the bot's member display name first
    )


def test_p07_mentions_of_blacklisted_participants_never_use_the_saved_nickname():
    deps = world_deps(blacklisted={BO})
    deps.rows[BO] = replace(deps.rows[BO], user_nickname="Bobby-P7")
    deps.memories = [memory(1, 1, f"{{user}} owes <@{BO}> money", lineage=10001)]
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "- Memories: ID:1 Ally owes bob money" in items.profile.text
    assert "Bobby-P7" not in all_item_text(items)


def test_p07_personalized_participant_mention_uses_saved_nickname():
    deps = world_deps()
    deps.rows[BO] = replace(deps.rows[BO], user_nickname="Bobby")
    deps.memories = [memory(1, 1, f"{{user}} owes <@{BO}> money", lineage=10001)]
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "- Memories: ID:1 Ally owes Bobby money" in items.profile.text
