"""A reply that appears on Discord while it is written (issue 18).

``LiveReply`` receives the provider's pieces. Its first message is posted once about a sentence is
there (the typing indicator shows until then), and the messages are then brought up to date at most
once per ``Pacing.interval_s``: the text so far is cut exactly as the final reply will be
(``split_message``), the posts whose piece changed are edited, and a piece that did not exist yet is
posted. A piece before the last one no longer changes once the next exists (``split_message`` cuts
greedily from the start), so a code fence is never broken, and each update edits at most the last two
posts. ``finish`` makes the posts equal the final text of record — the only text that counts: a
provider's retry restarts its pieces, and the final text replaces whatever the stream showed.

When generation fails after something was shown, the posts are deleted (``withdraw``) and the
channel gets the one short notice every failed turn gets, so no half message is left without an
explanation, and a failure reads the same whether or not the stream had started.

Rate limits are discord.py's: each edit or post waits for its bucket. Time is the injectable
``Pacing.clock``, so tests drive the pace without sleeping.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import discord

from bot.discord.delivery import Delivery, Speaker

logger = logging.getLogger(__name__)

# A sentence has ended: its mark, then a space or a line break (or a line break on its own).
SENTENCE_END = re.compile(r"[.!?…。！？](\s)|\n")
MIN_FIRST_CHARS = 20  # "Hi." alone is not worth a message and an edit a moment later


@dataclass(frozen=True)
class Pacing:
    interval_s: float = 1.0  # at most one update of the posts per interval
    first_chars: int = 120  # shown after this much even without a sentence end
    clock: Callable[[], float] = time.monotonic


def worth_showing(text: str, pacing: Pacing) -> bool:
    """About a sentence is there."""
    stripped = text.strip()
    if len(stripped) >= pacing.first_chars:
        return True
    return len(stripped) >= MIN_FIRST_CHARS and SENTENCE_END.search(text) is not None


@dataclass
class LiveReply:
    """One persona's streamed reply. ``speaker`` is resolved at the first post (finding the alter's
    webhook costs a request); ``on_visible`` runs once the first message is there (it ends the
    typing indicator)."""

    speaker_for: Callable[[], Awaitable[Speaker]]
    pacing: Pacing
    on_visible: Callable[[], Awaitable[object]]
    text: str = ""
    messages: list[discord.Message] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    _speaker: Speaker | None = None
    _updated_at: float = 0.0
    _stalled: bool = False  # Discord refused an update: the rest waits for the final text

    @property
    def visible(self) -> bool:
        return bool(self.messages)

    @property
    def speaker(self) -> Speaker:
        assert self._speaker is not None, "resolved by the first post"
        return self._speaker

    async def add(self, delta: str) -> None:
        """The DeltaSink of the turn (``bot.conversation.providers.DeltaSink``)."""
        self.text += delta
        now = self.pacing.clock()
        if self._stalled:
            return
        if not self.visible:
            if not worth_showing(self.text, self.pacing):
                return
        elif now - self._updated_at < self.pacing.interval_s:
            return
        try:
            speaker = await self._resolve()
            await self._show(speaker.pieces(self.text))
        except discord.HTTPException as exc:
            # Not the provider's failure: the reply is still generated and posted (or refused) at the end.
            logger.warning("streamed update refused (HTTP %s); the reply is posted when complete", exc.status)
            self._stalled = True
        self._updated_at = now

    async def finish(self, text: str, *, first_embed: discord.Embed | None = None) -> Delivery:
        """The posts become ``text`` exactly; ``first_embed`` (the reply notice) joins the first."""
        speaker = await self._resolve()
        pieces = speaker.pieces(text)
        await self._show(pieces, first_embed=first_embed)
        while len(self.messages) > len(pieces):  # the final text is shorter than what was shown
            await speaker.delete(self.messages.pop())
            self.shown.pop()
        return Delivery([str(m.id) for m in self.messages], via_webhook=speaker.via_webhook)

    async def withdraw(self) -> None:
        """Delete what was shown (generation failed)."""
        if self._speaker is None:
            return
        while self.messages:
            await self._speaker.delete(self.messages.pop())
        self.shown.clear()

    async def _resolve(self) -> Speaker:
        if self._speaker is None:
            self._speaker = await self.speaker_for()
        return self._speaker

    async def _show(self, pieces: list[str], *, first_embed: discord.Embed | None = None) -> None:
        speaker = await self._resolve()
        for index, piece in enumerate(pieces):
            embed = first_embed if index == 0 else None
            if index < len(self.messages):
                if self.shown[index] != piece or embed is not None:
                    await speaker.edit(self.messages[index], piece, embed=embed)
                    self.shown[index] = piece
                continue
            self.messages.append(await speaker.send(index, piece, embed=embed))
            self.shown.append(piece)
            if index == 0:
                await self.on_visible()
