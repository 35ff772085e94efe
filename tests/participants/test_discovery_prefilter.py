"""D-20: the ASCII prefilter of ``standalone_position`` never changes its answer."""

from __future__ import annotations

import regex
from hypothesis import assume, given
from hypothesis import strategies as st

from chatcontext.participants.discovery import prefilter_text, standalone_position
from chatcontext.participants.model import normalize_alias


def test_d20_prefilter_folds_every_character_ignorecase_matches_to_ascii() -> None:
    """Every code point that `regex` IGNORECASE matches to an ASCII character becomes that character
    (lower-cased) in the prefilter haystack, so an ASCII alias word is always found there when the
    regex could match it."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for code in range(128):
        char = chr(code)
        for match in set(regex.findall(regex.escape(char), every, regex.IGNORECASE)):
            assert char.lower() in prefilter_text(match), (hex(code), hex(ord(match)))


_NAME = st.text(alphabet=st.sampled_from("aikKsSIlo _@\u0130\u0131\u017f\u212a\u00e9 \t"), min_size=1, max_size=8)


@given(name=_NAME, text=st.lists(_NAME, max_size=6).map(" ".join))
def test_d20_prefilter_gives_the_regex_answer(name: str, text: str) -> None:
    normalized = normalize_alias(name)
    assume(normalized)
    assert standalone_position(normalized, text, prefiltered=prefilter_text(text)) == standalone_position(
        normalized, text
    )


def test_d20_prefilter_keeps_turkic_and_kelvin_matches() -> None:
    text = "hi \u0130van and \u212aai"
    prefiltered = prefilter_text(text)
    assert standalone_position("ivan", text, prefiltered=prefiltered) == 3
    assert standalone_position("kai", text, prefiltered=prefiltered) == standalone_position("kai", text)
    assert standalone_position("bob", text, prefiltered=prefiltered) is None
