"""The confirmations a tool posts in the channel, in the notice format the history reader
recognises (build-context.md BC6-02..06): a catalogue title, a description, and the footer token
``[tomori:v1:{kind}]``, from the persona itself (the bot account, or the webhook for alters). The
next turn reads them as ``[System: …]`` lines; a user's look-alike is never a notice (BC6-05)."""

from __future__ import annotations

from dataclasses import dataclass

from chatcontext.core.notices import EN_US, kind_for_key

NOTICE_COLOR = 0x5865F2


@dataclass(frozen=True)
class Notice:
    kind: str
    title: str
    description: str

    @property
    def footer(self) -> str:
        return f"[tomori:v1:{self.kind}]"

    def as_json(self) -> dict[str, object]:
        return {"title": self.title, "description": self.description, "footer_text": self.footer, "color": NOTICE_COLOR}


def notice(key: str, description: str, **names: str) -> Notice:
    """The notice of catalogue ``key`` (its en-US title filled with ``names``)."""
    kind = kind_for_key(key)
    assert kind is not None, key  # the keys used here are the catalogue's own
    return Notice(kind=kind, title=EN_US[key].format(**names), description=description)
