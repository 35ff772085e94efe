"""Persona trigger matcher (participants.md D-12, D-07; §8 T-16)."""

from __future__ import annotations

import pytest

from chatcontext.core.participants.triggers import persona_triggered, trigger_matches, triggered_personas
from tests.chatcontext.participants.builders import lilya, personas, ren, tomori


def test_t16_d12_cjk_trigger_is_a_case_sensitive_substring():
    assert trigger_matches("トモリ", "トモリちゃん")
    assert trigger_matches("トモリ", "ねえトモリ")
    assert not trigger_matches("トモリ", "ともり")
    assert trigger_matches("한국", "x한국x")


def test_t16_d12_latin_trigger_needs_word_boundaries():
    assert not trigger_matches("ren", "rental")
    assert not trigger_matches("ren", "children")
    assert trigger_matches("ren", "hey ren!")
    assert trigger_matches("ren", "REN")


def test_t16_d07_quoted_trigger_is_cleaned_before_matching():
    assert trigger_matches('"Ren"', "ren")
    assert trigger_matches("「Ren」", "ok REN.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("LIIILYAAA look", True),
        ("lilyyyya", True),
        ("lilyanne", False),
        ("xlilya", False),
        ("lilya_", False),  # `_` is a word character
        ("élilya", False),  # so are letters outside ASCII
        ("lilya\u0301", False),  # and combining marks
        ("lilya1", False),
        ("@lilya", True),
        ("(lilya)", True),
    ],
)
def test_d12_screaming_pattern(text, expected):  # type: ignore[no-untyped-def]
    assert trigger_matches("lilya", text) is expected


def test_d12_non_letters_stay_literal():
    assert trigger_matches("r2-d2", "hi R2-D2!")
    assert trigger_matches("r2-d2", "RR2-DD2")
    assert not trigger_matches("r2-d2", "r22-d2")
    assert trigger_matches("a.b", "a.b")
    assert not trigger_matches("a.b", "axb")


def test_d12_mention_trigger_matches_real_mentions_of_that_id():
    assert trigger_matches("<@123456789012345678>", "hi <@123456789012345678>")
    assert trigger_matches("<@!123456789012345678>", "hi <@123456789012345678>")
    assert trigger_matches("<@123456789012345678>", "hi <@!123456789012345678>")
    assert not trigger_matches("<@123456789012345678>", "hi 123456789012345678")
    assert not trigger_matches("<@123456789012345678>", "hi <@1234567890123456789>")


def test_d12_empty_triggers_never_match():
    assert not trigger_matches("", "anything")
    assert not trigger_matches('""', "")


def test_d11_any_trigger_of_a_persona_fires_in_catalog_order():
    assert persona_triggered(lilya(), "lil, come here")
    assert not persona_triggered(ren(), "rental")
    assert [p.persona_nickname for p in triggered_personas(personas(), "ren and TOMORI")] == ["Tomori", "Ren"]
    assert not persona_triggered(tomori(trigger_words=()), "tomori")
