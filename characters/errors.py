"""The one refusal of a card or lorebook file."""

from __future__ import annotations


class CardError(ValueError):
    """The file is refused; the message is one line, safe to show (it never repeats the file's text)."""
