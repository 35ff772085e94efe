"""The playground's Regenerate button (issue 30 item 4; build-context.md BC9-06, BC9-10): a persona's
reply is written again for the same message and replaces the old one in place (the page updates it
like any message); each version keeps its prompt record, and the new record names the one it
replaced (``chatcontext.records.commands``).

As on Discord (``bot.discord.exts.regenerate``), only the channel's latest regenerable turn can be
regenerated (its fast-regeneration recorder holds the reply), and the asker is admitted again. The
playground is the moderators' console, so any moderator of the server may regenerate; the record
names the member they speak as.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from bot.conversation.admission import admit
from bot.conversation.db import in_callers_transaction as db
from bot.conversation.jobs import TurnJob
from bot.conversation.planner import TurnPlanner
from bot.conversation.runner import TurnRunner
from bot.conversation.state import load_author_state
from bot.playground import live
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.service import PLANNER, PlaygroundJob, PlaygroundTurn, playground_bot, read_trigger, server_state
from bot.playground.store import PlaygroundError
from chatcontext.core.types import PersonaInfo, ReplyNoticeState
from chatcontext.models import PromptRecord
from chatcontext.pipeline import FAST_REGENERATION
from chatcontext.records.commands import TurnCommand

NOT_A_REPLY = "Only a persona's reply to a message can be regenerated."
NOT_LATEST = "Only the latest reply in this channel can be regenerated."
PERSONA_GONE = "The persona that wrote this reply no longer exists."
NOT_ADMITTED = "The author of the message this reply answered can no longer be answered (privacy level or a block)."
BUSY = "The channel's queue is full; try again when its turns are done."


@dataclass
class ReplacingOutlet(PlaygroundOutlet):
    """Writes the new version into the old reply's row, which the page then shows in place."""

    replaced: PlaygroundMessage = field(kw_only=True)

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> PlaygroundMessage:
        row = await db(rewrite_reply)(self.replaced, text)
        await live.publish_message(self.channel, row, self.bot_user, stream_id=self._stream_id(persona))
        self._delivered[persona.persona_id] = row.disc_id
        return row


def rewrite_reply(row: PlaygroundMessage, text: str) -> PlaygroundMessage:
    row.content = text
    row.save(update_fields=["content"])
    return row


def replied_record(channel_disc_id: str, trigger: PlaygroundMessage, persona_id: int) -> int | None:
    """The record of the version being replaced: the persona's latest turn on that message."""
    records = PromptRecord.objects.filter(
        source=PromptRecord.Source.PLAYGROUND,
        channel_disc_id=channel_disc_id,
        trigger_message_disc_id=trigger.disc_id,
        persona_id=persona_id,
    )
    return records.order_by("-id").values_list("id", flat=True).first()


async def regenerate_reply(
    channel: PlaygroundChannel,
    reply: PlaygroundMessage,
    *,
    asker_disc_id: str,
    runner: TurnRunner,
    posted_by: int | None = None,
    planner: TurnPlanner[PlaygroundJob] = PLANNER,
) -> list[PlaygroundTurn]:
    """Run the reply's turn again; raises ``PlaygroundError`` (a message for the page) when refused."""
    trigger_row = reply.reply_to
    if not reply.is_bot or reply.persona_id is None or trigger_row is None:
        raise PlaygroundError(NOT_A_REPLY)
    state = await db(server_state)(channel.server)
    bot_user = await db(playground_bot)(channel, state)
    trigger = await db(read_trigger)(channel, trigger_row, bot_user)
    recorder = FAST_REGENERATION.latest(trigger.message.channel_id)
    if recorder is None or not recorder.holds(reply.disc_id):
        raise PlaygroundError(NOT_LATEST)
    persona = next((p for p in state.personas if p.persona_id == reply.persona_id), None)
    if persona is None:
        raise PlaygroundError(PERSONA_GONE)
    author = await db(load_author_state)(state.server_id, trigger.message.author, runner.clock())
    row = author.user_row
    decision = admit((persona,), privacy_level=row.privacy_level, blocked_persona_ids=author.muted_persona_ids)
    if not decision.admitted:
        raise PlaygroundError(NOT_ADMITTED)
    previous = await db(replied_record)(trigger.message.channel_id, trigger_row, reply.persona_id)
    outlet = ReplacingOutlet(channel, trigger_row, bot_user, clock=runner.clock, replaced=reply)
    turn = TurnJob.answering(
        trigger.message, replace(decision, author=author), state, outlet, triggerer=trigger.member, posted_by=posted_by
    )
    turn.command = TurnCommand(
        "regenerate",
        asker_disc_id,
        f"Regenerate (playground): a new version of the reply of record {previous}.",
        replaces_record=previous,
    )
    job = PlaygroundJob(turn=turn, runner=runner, done=asyncio.get_running_loop().create_future())
    if not await planner.submit(job):
        raise PlaygroundError(BUSY)
    return await job.done
