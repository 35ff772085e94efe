"""Text from outside made storable (issue 26 item 4, ``chatcontext.core.storable``): properties over
arbitrary Unicode, lone surrogates and NUL included; pure functions, so many examples are cheap."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from chatcontext.core.storable import UNSTORABLE, storable_json_text, storable_text

# Every code point, the surrogates and NUL among them (st.characters leaves surrogates out by default).
any_char = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"]),
    st.just("\x00"),
)
any_text = st.text(any_char, max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)


def storable(text: str) -> bool:
    text.encode("utf-8")  # raises on a lone surrogate
    return "\x00" not in text


@given(any_text)
@example("Hi\x00 there \ud800!")
@example("\ud83d\ude00")
def test_storable_text_encodes_keeps_no_nul_and_is_idempotent(text: str) -> None:
    out = storable_text(text)
    assert storable(out) and storable_text(out) == out
    if UNSTORABLE.search(text) is None:
        assert out == text


def test_nul_is_dropped_a_lone_surrogate_is_a_replacement_character_and_a_pair_is_its_character() -> None:
    assert storable_text("a\x00b\ud800c\udfff") == "ab\ufffdc\ufffd"
    assert storable_text("\ud83d\ude00") == "😀"


@given(json_values)
def test_json_arguments_decode_to_storable_strings_escaped_or_not(value: object) -> None:
    for raw in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        out = storable_json_text(raw)
        assert storable(out)
        decoded = json.loads(out)
        strings = [decoded] if isinstance(decoded, str) else []
        stack = [decoded]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                strings += list(item)
                stack += list(item.values())
            elif isinstance(item, list):
                stack += item
            elif isinstance(item, str):
                strings.append(item)
        assert all(storable(s) for s in strings)


@given(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40))
def test_json_that_needs_no_change_keeps_its_spelling(text: str) -> None:
    raw = json.dumps({"content": text})
    assert storable_json_text(raw) == raw
    assert storable_json_text("{not json \\u0000") == "{not json \\u0000"
    nested = "[" * 100_000 + '"\\u0000"' + "]" * 100_000
    assert storable_json_text(nested) == nested  # too deep to decode: left as written, for the tool layer to refuse
