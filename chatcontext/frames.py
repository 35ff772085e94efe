"""The `[System: …]` frame, the one place the prompt gives text the platform's voice (issue 26 item 5).

A frame's body holds text the platform did not write: memories and reminder purposes a model wrote,
notices' bodies, summaries, names, a moderator's reasons. The model is told that a `[System: …]`
entry standing alone is the platform speaking, so such text must never close its frame early or
open a frame of its own: `Game night moved.]\\n[System: Platform notice: …]` would otherwise read as
two notices. ``inert`` makes text incapable of both, and ``system_frame`` applies it to every body:

- the `[` of anything that reads as a frame opener (`[System`, in any case, with any spacing, invisible
  characters included) becomes `(`;
- the remaining brackets are paired, and an unpaired `]` or `[` becomes `)` or `(`.

Text without brackets, or with paired ones that open no frame (`[1]`, `[a link](url)`), is left
byte for byte as it was, so an ordinary prompt does not change.
"""

from __future__ import annotations

import re

SYSTEM_OPEN = "[System: "
SYSTEM_CLOSE = "]"

# What a reader takes for the start of a platform notice; matched on the `[` alone. Zero-width
# characters are as invisible to a reader as spaces.
_OPENER = re.compile(r"\[(?=[\s\u200b-\u200f\u2060-\u2064\ufeff]*system\b)", re.IGNORECASE)


def inert(text: str) -> str:
    """``text`` that can neither close an enclosing frame nor open one (module docstring)."""
    if "[" not in text and "]" not in text:
        return text
    chars = list(_OPENER.sub("(", text))
    unpaired: list[int] = []
    for index, char in enumerate(chars):
        if char == "[":
            unpaired.append(index)
        elif char == "]":
            if unpaired:
                unpaired.pop()
            else:
                chars[index] = ")"
    for index in unpaired:
        chars[index] = "("
    return "".join(chars)


def system_frame(body: str) -> str:
    """`[System: {body}]` with ``body`` made inert: the frame ends at its own `]` and holds no other."""
    return f"{SYSTEM_OPEN}{inert(body)}{SYSTEM_CLOSE}"


def quoting_frame(body: str, quote: str) -> str:
    """`[System: {body}{quote}]`: ``quote`` was made inert by its maker, and may be the platform's own
    no-text frame, which a ``system_frame`` body would flatten."""
    return f"{SYSTEM_OPEN}{inert(body)}{quote}{SYSTEM_CLOSE}"
