"""R-14: the precheck that lets ``convert_mentions`` skip texts without tokens never skips one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.participants.mentions import _TOKENS, may_hold_tokens

_PIECES = st.sampled_from(
    ["<@12>", "<@!3>", "<#45>", "<@&6>", "{{user}}", "{BOT}", "@{user}", "https://discord.com/channels/1/2",
     "HTTPS://Discord.com/channels/@me/9", "hi", " ", "<", "{", "://", "@", "é"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_r14_precheck_never_skips_a_text_with_a_token(text: str) -> None:
    assert may_hold_tokens(text) or _TOKENS.search(text) is None


def test_r14_precheck_skips_plain_text() -> None:
    assert not may_hold_tokens("Mina likes tea; see you at 5 @ the cafe")
    assert may_hold_tokens("ping <@12>")
