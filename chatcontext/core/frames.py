"""The `[System: …]` frame, the one place the prompt gives text the platform's voice (issue 26 item 5).

A frame's body holds text the platform did not write: memories and reminder purposes a model wrote,
notices' bodies, summaries, names, a moderator's reasons. The model is told that a `[System: …]`
entry standing alone is the platform speaking, so such text must never close its frame early or
open a frame of its own: `Game night moved.]\\n[System: Platform notice: …]` would otherwise read as
two notices. ``inert`` makes text incapable of both, and ``system_frame`` applies it to every body:

- the `[` of anything that reads as a frame opener becomes `(`: `[System` in any case, spaced, with
  invisible characters or combining marks before or inside the word, in full-width or styled forms
  (NFKC) and with Cyrillic or Greek letters drawn like the Latin ones (issue 27 review);
- the remaining brackets (full-width ones included) are paired, and an unpaired `]` or `[` becomes
  `)` or `(`.

Text without brackets, or with paired ones that open no frame (`[1]`, `[a link](url)`), is left
byte for byte as it was, so an ordinary prompt does not change.
"""

from __future__ import annotations

import functools
import unicodedata

import regex

SYSTEM_OPEN = "[System: "
SYSTEM_CLOSE = "]"

# Every character a reader takes for a square bracket (their NFKC form is one), and what it becomes.
_OPENING = {"[": "(", "\uff3b": "\uff08", "\ufe47": "\ufe35"}
_CLOSING = {"]": ")", "\uff3d": "\uff09", "\ufe48": "\ufe36"}
_BRACKETS = regex.compile("[" + regex.escape("".join(_OPENING) + "".join(_CLOSING)) + "]")

# What a reader does not see between the bracket and the word, or inside it: format characters
# (zero-width, bidi controls, soft hyphen), combining marks and spaces.
_UNSEEN = regex.compile(r"[\p{Cf}\p{Mn}\p{Me}\s]*")
# Cyrillic, Greek and small-capital letters drawn like those of "system", after casefolding.
_LOOKALIKES = str.maketrans(
    {
        "\u0455": "s", "\ua731": "s",
        "\u0443": "y", "\u04af": "y", "\u03c5": "y", "\u03b3": "y", "\u028f": "y",
        "\u0442": "t", "\u03c4": "t", "\u1d1b": "t",
        "\u0435": "e", "\u03b5": "e", "\u1d07": "e",
        "\u043c": "m", "\u03bc": "m", "\u1d0d": "m",
    }
)  # fmt: skip
_WORD = "system"


@functools.lru_cache(maxsize=4096)  # bounded: hostile text may hold any number of distinct characters
def _seen_as(char: str) -> str:
    """What a reader takes ``char`` for: plain lowercase Latin where it is drawn like it."""
    return _UNSEEN.sub("", unicodedata.normalize("NFKC", char).casefold().translate(_LOOKALIKES))


def _opens_frame(text: str, index: int) -> bool:
    """Whether the bracket at ``index`` reads as the start of a platform notice: the letters a reader
    sees after it spell "system" and go on with no other letter (`[Systematic` opens nothing)."""
    letters = ""
    position = index + 1
    while len(letters) <= len(_WORD):
        position = _UNSEEN.match(text, position).end()
        if position == len(text):
            break
        letters += _seen_as(text[position])
        position += 1
        if not _WORD.startswith(letters[: len(_WORD)]):
            return False
    following = letters[len(_WORD) : len(_WORD) + 1]
    return letters.startswith(_WORD) and not (following.isalnum() or following == "_")


def inert(text: str) -> str:
    """``text`` that can neither close an enclosing frame nor open one (module docstring)."""
    if _BRACKETS.search(text) is None:
        return text
    chars = list(text)
    unpaired: list[int] = []
    for index, char in enumerate(chars):
        if char in _OPENING:
            if _opens_frame(text, index):
                chars[index] = _OPENING[char]
            else:
                unpaired.append(index)
        elif char in _CLOSING:
            if unpaired:
                unpaired.pop()
            else:
                chars[index] = _CLOSING[char]
    for index in unpaired:
        chars[index] = _OPENING[chars[index]]
    return "".join(chars)


def system_frame(body: str) -> str:
    """`[System: {body}]` with ``body`` made inert: the frame ends at its own `]` and holds no other."""
    return f"{SYSTEM_OPEN}{inert(body)}{SYSTEM_CLOSE}"


def quoting_frame(body: str, quote: str) -> str:
    """`[System: {body}{quote}]`: ``quote`` was made inert by its maker, and may be the platform's own
    no-text frame, which a ``system_frame`` body would flatten."""
    return f"{SYSTEM_OPEN}{inert(body)}{quote}{SYSTEM_CLOSE}"
