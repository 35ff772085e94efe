"""Reply splitting at Discord's 2,000-character limit (issue 6: words and code blocks intact)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.conversation.texts import ERROR_MESSAGES, localized
from bot.discord.delivery import DISCORD_MESSAGE_LIMIT, split_message


def fence_lines(piece: str) -> list[str]:
    return [line.strip() for line in piece.split("\n") if line.strip().startswith("```")]


def is_balanced(piece: str) -> bool:
    return len(fence_lines(piece)) % 2 == 0


def words_outside_fences(pieces: list[str]) -> list[str]:
    return [w for piece in pieces for w in piece.split() if not w.startswith("```")]


def test_short_text_is_one_message():
    assert split_message("hello there") == ["hello there"]
    assert split_message("   ") == []


def test_a_5000_character_code_reply_is_three_messages_with_fences_reopened():
    code = "\n".join(f"    value_{i:04d} = compute({i}) + offset  # step {i}" for i in range(101))
    text = "Here is the script:\n```python\n" + code + "\n```\nThat should do it."
    assert 4950 <= len(text) <= 5050

    pieces = split_message(text)

    assert len(pieces) == 3
    assert all(len(p) <= DISCORD_MESSAGE_LIMIT for p in pieces)
    assert all(is_balanced(p) for p in pieces)
    assert pieces[0].startswith("Here is the script:\n```python\n")
    assert pieces[1].startswith("```python\n") and pieces[2].startswith("```python\n")
    assert pieces[0].endswith("\n```") and pieces[1].endswith("\n```")
    assert words_outside_fences(pieces) == words_outside_fences([text])


def test_words_are_never_cut():
    text = " ".join(f"word{i}" for i in range(800))
    pieces = split_message(text)
    assert len(pieces) > 1
    assert [w for p in pieces for w in p.split()] == text.split()


def test_a_piece_never_ends_on_the_line_that_opens_a_block():
    text = "a" * 1500 + "\n" + "b " * 230 + "\n```js\n" + "x = 1;\n" * 100 + "```"
    pieces = split_message(text)
    assert all(not p.rstrip().endswith("```js") for p in pieces)
    assert all(is_balanced(p) for p in pieces)


def test_a_word_longer_than_the_limit_is_cut_hard():
    pieces = split_message("z" * 4500)
    assert [len(p) for p in pieces] == [1996, 1996, 508]


def test_error_messages_are_localised_with_an_en_us_default():
    assert localized(ERROR_MESSAGES, "ja-JP") == ERROR_MESSAGES["ja"]
    assert localized(ERROR_MESSAGES, "fr") == ERROR_MESSAGES["en-US"]
    assert localized(ERROR_MESSAGES, None) == ERROR_MESSAGES["en-US"]


word = st.text(alphabet="abcdefghij", min_size=1, max_size=40)
line = st.one_of(
    st.lists(word, min_size=0, max_size=30).map(" ".join),
    st.sampled_from(["```", "```python", "```js", "``` ", "~~~"]),
)


@given(st.lists(line, min_size=0, max_size=400), st.integers(min_value=120, max_value=DISCORD_MESSAGE_LIMIT))
def test_split_invariants(lines, limit):
    text = "\n".join(lines)
    pieces = split_message(text, limit)

    assert all(0 < len(p) <= limit for p in pieces)
    assert all(p.strip() for p in pieces)
    # Balanced as long as the source itself was: an unclosed source fence stays open in the last piece.
    if is_balanced(text):
        assert all(is_balanced(p) for p in pieces)
    else:
        assert all(is_balanced(p) for p in pieces[:-1])
    # Nothing lost, nothing reordered, no word cut (every word is shorter than the limit).
    assert words_outside_fences(pieces) == words_outside_fences([text])
