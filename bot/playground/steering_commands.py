"""``/refresh`` and ``/compact`` typed in a playground channel (``bot.conversation.steering`` does the
work, as for ``bot.discord.exts.steering`` on Discord).

Who may: the playground knows of a member's permissions only what the bot stored (``ServerMember``'s
Manage Server), so a member with Manage Server stands for one with Manage Messages here.
Arguments: ``/compact`` (a conversation summary), ``/compact scene`` (a roleplay scene summary),
``/compact manual <text>`` (the moderator's own summary); the kinds' full names work too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.conversation import steering
from bot.conversation.db import in_callers_transaction as db
from bot.conversation.jobs import TurnJob
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.state import AuthorState, ServerState, load_server_state, read_author_state
from bot.playground import store
from bot.playground.command_call import CommandAnswer, CommandCall, Handler
from bot.playground.models import PlaygroundChannel
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.types import Author, ChatIncoming, DiscordMessage, LockedTurn, MemberInfo
from personas import models as m

Kind = steering.Kind
KIND_WORDS = {
    "summary": Kind.SUMMARY,
    "scene": Kind.ROLEPLAY_SCENE,
    Kind.ROLEPLAY_SCENE.value: Kind.ROLEPLAY_SCENE,
    "manual": Kind.MANUAL_ENTRY,
    Kind.MANUAL_ENTRY.value: Kind.MANUAL_ENTRY,
}
EMPTY_CHANNEL = "There is nothing to summarise in this channel yet."


@dataclass(frozen=True)
class ChannelNow:
    """The channel as a command finds it: its server, the bot's account, whether the member may
    steer, and the newest message (None: an empty channel) with its author's rows."""

    state: ServerState
    bot_user: Author
    may_steer: bool
    newest: DiscordMessage | None = None
    newest_member: MemberInfo | None = None
    newest_author: AuthorState | None = None

    def outlet(self, channel: PlaygroundChannel, call: CommandCall) -> PlaygroundOutlet:
        # Notices answer nobody's message: no trigger row.
        return PlaygroundOutlet(channel, None, self.bot_user, clock=call.runner.clock)


def read_channel(channel: PlaygroundChannel, member_disc_id: str, now_ms: int) -> ChannelNow:
    server = channel.server
    state = load_server_state(
        server.server_disc_id, name=server.name, is_dm=server.is_dm_channel, locale=server.registration_locale
    )
    bot_user = store.bot_identity(server, state.main_persona)
    may_steer = m.ServerMember.objects.filter(
        server=server, user_disc_id=member_disc_id, can_manage_server=True
    ).exists()
    row = channel.messages.order_by("-created_at_ms", "-id").first()
    if row is None:
        return ChannelNow(state, bot_user, may_steer)
    transport = PlaygroundTransport(channel, bot_user=bot_user)
    newest = transport.fetch_message(row.disc_id)
    return ChannelNow(
        state,
        bot_user,
        may_steer,
        newest,
        transport.get_cached_member(newest.author.id),
        read_author_state(state.server_id, newest.author.id, now_ms),
    )


def command_job(call: CommandCall, now: ChannelNow) -> TurnJob[Any] | None:
    """A turn of the main persona anchored on the newest message: the window a turn reads now."""
    persona = now.state.main_persona
    if persona is None or now.newest is None:
        return None
    persona_ids = (persona.persona_id,) if persona.persona_id is not None else ()
    locked = LockedTurn(
        incoming=ChatIncoming(message=now.newest), channel_id=call.channel.disc_id, triggered_persona_ids=persona_ids
    )
    outlet = now.outlet(call.channel, call)
    return TurnJob(locked, outlet, (persona,), now.state, now.newest_author, triggerer=now.newest_member)


async def refresh(call: CommandCall) -> CommandAnswer:
    now = await db(read_channel)(call.channel, call.member_disc_id, call.runner.clock())
    if not (now.state.refresh_open_to_all or now.may_steer):
        return CommandAnswer(steering.REFRESH_REFUSED, refused=True)
    persona = now.state.main_persona
    if persona is None:
        return CommandAnswer(steering.NO_PERSONA, refused=True)
    await now.outlet(call.channel, call).post_notices(persona, [steering.refresh_notice()])
    return CommandAnswer(steering.REFRESHED)


def compact_arguments(arguments: str) -> tuple[str, str] | str:
    """``(kind, text)``, or the reason the arguments are refused."""
    word, _, rest = arguments.partition(" ")
    kind = KIND_WORDS.get(word.lower()) if word else Kind.SUMMARY
    if kind is None:
        return f"Unknown kind '{word}': use summary, scene or manual <text>."
    text = rest.strip()
    if (kind == Kind.MANUAL_ENTRY) != bool(text):
        return steering.MANUAL_NEEDS_TEXT if kind == Kind.MANUAL_ENTRY else steering.TEXT_ONLY_FOR_MANUAL
    return kind, text


async def compact(call: CommandCall) -> CommandAnswer:
    now = await db(read_channel)(call.channel, call.member_disc_id, call.runner.clock())
    if not now.may_steer:
        return CommandAnswer(steering.COMPACT_REFUSED, refused=True)
    parsed = compact_arguments(call.arguments)
    if isinstance(parsed, str):
        return CommandAnswer(parsed, refused=True)
    kind, text = parsed
    job = command_job(call, now)
    if job is None:
        return CommandAnswer(steering.NO_PERSONA if now.state.main_persona is None else EMPTY_CHANNEL, refused=True)
    if kind == Kind.MANUAL_ENTRY:
        try:
            await steering.post_manual_entry(call.runner, job, text, call.member_disc_id)
        except DeliveryRefused as exc:
            return CommandAnswer(f"The entry could not be posted ({exc}); nothing changed.", refused=True)
        return CommandAnswer(steering.MANUAL_POSTED)
    outcome = await steering.compact(call.runner, steering.CompactRequest(job, kind, call.member_disc_id))
    return CommandAnswer(steering.compacted(outcome), records=[outcome.record] if outcome.record else [])


COMMANDS: dict[str, Handler] = {"refresh": refresh, "compact": compact}
