"""``PlaygroundOutlet``: a playground channel as the outlet of a turn (``bot.conversation.runner``).

The turn reads the channel through a ``PlaygroundTransport``, and speaks as Discord would show it:
the reply is stored in the channel as a reply to the trigger (the main persona as the bot account,
an alter through the channel webhook, ``store.store_bot_message``) and published to the channel's
pages; while it is generated, the pages see the persona typing and the reply streaming in
(``bot.playground.live``: ``typing``, ``delta``, then the ``message`` that replaces the stream).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import ClassVar

from bot.conversation.db import in_callers_transaction as db
from bot.conversation.planner import Clock
from bot.conversation.providers import DeltaSink
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.texts import ERROR_MESSAGES, localized
from bot.conversation.tools.notices import Notice
from bot.playground import live, store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.regeneration import record_turn_output_message
from chatcontext.core.types import Author, ChatTurnContext, PersonaInfo, ReplyNoticeState
from chatcontext.models import PromptRecord


@dataclass
class PlaygroundOutlet:
    channel: PlaygroundChannel
    trigger_row: PlaygroundMessage | None  # what the reply answers; None: no stored message (a reminder turn)
    bot_user: Author
    clock: Clock
    # Personas whose reply started streaming: a failure notice then replaces what was streamed.
    _streaming: set[int | None] = field(default_factory=set, init=False, repr=False)
    # Each persona's delivered reply row, until its turn's record offers Regenerate on it.
    _delivered: dict[int | None, str] = field(default_factory=dict, init=False, repr=False)

    source: ClassVar[str] = PromptRecord.Source.PLAYGROUND
    thread_parent_id: ClassVar[str | None] = None  # playground channels have no threads

    @property
    def channel_name(self) -> str:
        return self.channel.name

    @property
    def channel_description(self) -> str | None:
        return self.channel.topic or None

    def transport(self) -> PlaygroundTransport:
        return PlaygroundTransport(self.channel, bot_user=self.bot_user)

    def _stream_id(self, persona: PersonaInfo) -> str:
        return live.stream_id(self._stream_anchor(), persona.persona_id)

    def _stream_anchor(self) -> str:
        return self.trigger_row.disc_id if self.trigger_row is not None else ""

    @contextlib.asynccontextmanager
    async def composing(self, persona: PersonaInfo) -> AsyncIterator[DeltaSink]:
        stream = self._stream_id(persona)
        self._streaming.add(persona.persona_id)
        await live.publish(
            self.channel.pk, {"kind": "typing", "stream_id": stream, "persona": persona.persona_nickname}
        )

        async def on_delta(text: str) -> None:
            await live.publish(self.channel.pk, {"kind": "delta", "stream_id": stream, "text": text})

        yield on_delta

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> PlaygroundMessage:
        row = await self._post(text, persona=persona, stream_of=persona)
        self._delivered[persona.persona_id] = row.disc_id
        return row

    async def offer_regeneration(self, ctx: ChatTurnContext, record_id: int) -> None:
        """BC9-06: the reply's row is what Regenerate may replace."""
        persona_id = ctx.current_persona.persona_id
        disc_id = self._delivered.pop(persona_id, None)
        if disc_id is not None:
            record_turn_output_message(ctx, disc_id, persona_id)

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """The short, localised notice the bot posts on Discord when generation fails, from the bot
        account itself."""
        streamed = persona.persona_id in self._streaming
        await self._post(localized(ERROR_MESSAGES, locale), persona=None, stream_of=persona if streamed else None)

    async def post_notices(self, persona: PersonaInfo, notices: list[Notice]) -> None:
        """Tool confirmations, as Discord shows them: a message of the persona with the notice embed."""
        for notice in notices:
            row = await db(store.store_bot_message)(
                self.channel,
                "",
                persona=persona,
                bot_user=self.bot_user,
                reply_to=None,
                now_ms=self.clock(),
                embeds=[notice.as_json()],
            )
            await live.publish_message(self.channel, row, self.bot_user)

    async def react(self, message_id: str, emoji: str) -> None:
        row = await db(store.react_as_bot)(self.channel, message_id, emoji, self.bot_user.id)
        if row is None:
            raise DeliveryRefused("HTTP 404")
        await live.publish_message(self.channel, row, self.bot_user)

    async def _post(
        self, text: str, *, persona: PersonaInfo | None, stream_of: PersonaInfo | None
    ) -> PlaygroundMessage:
        row = await db(store.store_bot_message)(
            self.channel,
            text,
            persona=persona,
            bot_user=self.bot_user,
            reply_to=self.trigger_row,
            now_ms=self.clock(),
        )
        stream = self._stream_id(stream_of) if stream_of is not None else None
        await live.publish_message(self.channel, row, self.bot_user, stream_id=stream)
        return row
