"""D-20: the prefilter of ``standalone_position`` never changes its answer."""

from __future__ import annotations

import regex
from hypothesis import assume, given
from hypothesis import strategies as st

from chatcontext.core.participants.model import normalize_alias
from chatcontext.participants.discovery import AliasPrefilter, fold_ascii, standalone_position


def test_d20_fold_maps_every_character_ignorecase_pairs_with_ascii_to_that_character() -> None:
    """Every code point `regex` IGNORECASE matches to an ASCII character folds to exactly that
    character (lower-cased), one character for one: the prefilter's soundness rests on it."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for code in range(128):
        char = chr(code)
        for match in set(regex.findall(regex.escape(char), every, regex.IGNORECASE)):
            assert fold_ascii(match) == char.lower(), (hex(code), hex(ord(match)))


def test_d20_fold_keeps_one_character_for_one_and_word_characters_word_characters() -> None:
    word = regex.compile(r"[\p{L}\p{N}\p{M}_]")
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        folded = fold_ascii(char)
        assert len(folded) == 1, hex(code)
        assert bool(word.match(char)) == bool(word.match(folded)), hex(code)


_PIECES = st.sampled_from(
    ["kai", "Kai", "\u212aai", "\u0130van", "ivan", "i\u0307van", "ſam", "sam", "@", "_", "-", ".", "7", "é", "\t", " "]
)
_TEXT = st.lists(_PIECES, max_size=10).map("".join)


@given(name=_TEXT, text=_TEXT)
def test_d20_prefilter_gives_the_regex_answer(name: str, text: str) -> None:
    normalized = normalize_alias(name)
    assume(normalized)
    expected = standalone_position(normalized, text)
    assert standalone_position(normalized, text, prefilter=AliasPrefilter.of(text)) == expected


def test_d20_prefilter_keeps_turkic_kelvin_and_long_s_matches() -> None:
    text = "hi \u0130van, \u212aai and ſam-chan"
    prefilter = AliasPrefilter.of(text)
    assert standalone_position("ivan", text, prefilter=prefilter) == 3
    assert standalone_position("kai", text, prefilter=prefilter) == 9
    assert standalone_position("sam-chan", text, prefilter=prefilter) == 17
    assert standalone_position("bob", text, prefilter=prefilter) is None
    assert not prefilter.may_occur("am")  # inside a word run: never standalone
