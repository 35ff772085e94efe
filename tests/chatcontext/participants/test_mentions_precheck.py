"""R-14: the prechecks that let ``convert_mentions`` and ``mention_ids`` skip texts and lines without
tokens never skip one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.participants.mentions import (
    _TOKENS,
    MentionDirectory,
    MentionTarget,
    convert_mentions,
    may_hold_tokens,
    mention_ids,
)

_PIECES = st.sampled_from(
    ["<@12>", "<@!3>", "<#45>", "<@&6>", "{{user}}", "{BOT}", "@{user}", "https://discord.com/channels/1/2",
     "HTTPS://Discord.com/channels/@me/9", "hi", " ", "<", "{", "://", "@", "é", "@{{user}}", "\n", "7", "/"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_r14_precheck_never_skips_a_text_with_a_token(text: str) -> None:
    assert may_hold_tokens(text) or _TOKENS.search(text) is None


_DIRECTORY = MentionDirectory(
    bot_user_id="3",
    bot_display_name="Tomori",
    users={"12": MentionTarget("Ally", "alice_srv", "alice")},
    channels={"45": "#general", "2": "#art"},
    roles={"6": "Mods"},
)


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_r14_a_multi_line_text_converts_as_one_pass_over_it(text: str) -> None:
    """Multi-line texts are converted line by line (only lines with a token hint): the same as one
    pass over the whole text, here with U+2028 standing in for each line break (neither is part of
    any token, and both satisfy every boundary a token's ends look at)."""
    one_pass = convert_mentions(text.replace("\n", "\u2028"), "Mina", "Tomori", True, directory=_DIRECTORY)
    assert convert_mentions(text, "Mina", "Tomori", True, directory=_DIRECTORY) == one_pass.replace("\u2028", "\n")


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_r14_mention_ids_of_the_hinted_lines_are_those_of_one_pass(text: str) -> None:
    matches = list(_TOKENS.finditer(text))
    users = {m.group("user") for m in matches if m.group("user")}
    channels = {m.group("channel") or m.group("link_id") for m in matches if m.group("channel") or m.group("link_id")}
    roles = {m.group("role") for m in matches if m.group("role")}
    assert mention_ids([text]) == (users, channels, roles)


def test_r14_precheck_skips_plain_text() -> None:
    assert not may_hold_tokens("Mina likes tea; see you at 5 @ the cafe")
    assert may_hold_tokens("ping <@12>")
    assert not may_hold_tokens("Ally (Mention: @{alice_srv}; Aliases: @{Ally})")
    assert may_hold_tokens("@{{user}}")
