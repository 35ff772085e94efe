"""A turn's job and where it speaks: the ``Outlet`` protocol every surface implements, the
``TurnJob`` a surface hands to ``bot.conversation.runner.TurnRunner``, the ``TurnResult`` it gets back
and ``build_chat_turn``, the ``ChatTurn`` of one persona of a job. Apart from the runner so that what
builds on jobs (``bot.conversation.steering``) and the runner that calls it import in one direction."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from bot.conversation.admission import Admission
from bot.conversation.providers import DeltaSink
from bot.conversation.state import AuthorState, ServerState
from bot.conversation.tools.notices import Notice
from bot.conversation.window_memory import WINDOWS
from chatcontext.captured import TurnTransport
from chatcontext.core.regeneration import REGENERATE
from chatcontext.core.triggerer import triggerer_naming
from chatcontext.core.types import (
    Author,
    ChatIncoming,
    ChatTurn,
    ChatTurnContext,
    DiscordMessage,
    LockedTurn,
    MemberInfo,
    PersonaInfo,
    ReplyNoticeState,
    ShortTermNote,
)
from chatcontext.records.commands import TurnCommand

if TYPE_CHECKING:
    from chatcontext.models import PromptRecord

# What an outlet's delivery gives back: the sent message ids on Discord, the stored reply row in
# the playground.
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Outlet(Protocol[R_co]):
    """Where the persona turns of one job read and speak."""

    @property
    def source(self) -> str:
        """The ``PromptRecord.Source`` of the turns spoken here."""

    @property
    def bot_user(self) -> Author:
        """The account the main persona speaks as."""

    @property
    def channel_name(self) -> str: ...

    @property
    def channel_description(self) -> str | None: ...

    @property
    def thread_parent_id(self) -> str | None: ...

    def transport(self) -> TurnTransport:
        """A fresh view of the channel for one persona turn (BC1-02: every persona reads it again)."""

    def composing(self, persona: PersonaInfo) -> AbstractAsyncContextManager[DeltaSink | None]:
        """Held while ``persona``'s reply is generated; gives where streamed pieces go, or None
        when the surface shows none."""

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> R_co:
        """Post the reply of record; raises ``DeliveryRefused``."""

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """Tell the channel that no reply was generated; raises ``DeliveryRefused``."""

    async def post_notices(self, persona: PersonaInfo, notices: list[Notice]) -> None:
        """Post the confirmations of ``persona``'s tool calls as notices; raises ``DeliveryRefused``."""

    async def react(self, message_id: str, emoji: str) -> None:
        """React to a message of the channel as the bot; raises ``DeliveryRefused``."""

    async def offer_regeneration(self, ctx: ChatTurnContext, record_id: int) -> None:
        """After the reply of a turn that offers fast regeneration (``chatcontext.core.regeneration``) was
        delivered and recorded as ``record_id``: record the messages it was posted as (BC9-06) and
        show the Regenerate action on it; raises ``DeliveryRefused``."""


def message_turn(message: DiscordMessage, personas: tuple[PersonaInfo, ...]) -> LockedTurn:
    """The locked turn of an admitted message: ``personas`` answer it."""
    return LockedTurn(
        incoming=ChatIncoming(message=message),
        channel_id=message.channel_id,
        triggered_persona_ids=tuple(p.persona_id for p in personas if p.persona_id is not None),
    )


@dataclass
class TurnJob(Generic[R]):
    """A locked turn with the outlet it speaks through and the rows it runs with.

    ``locked_turn.incoming.message`` is the trigger as the pipeline reads it. ``author`` holds the
    trigger author's rows, None when they have none (a reminder turn anchored on the message of
    someone never registered); ``triggerer`` is the author as a member of the server, None in a DM
    or for a synthetic trigger. ``posted_by``: the staff account that posted the trigger as the
    member (the playground), which the audit trail of the turn's tool writes names. ``command``: what
    a slash command or button made of the turn (``/impersonate``, ``/scene``, Regenerate), kept on its
    prompt records.
    """

    locked_turn: LockedTurn
    outlet: Outlet[R]
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState | None
    triggerer: MemberInfo | None = None
    posted_by: int | None = None
    command: TurnCommand | None = None

    @classmethod
    def answering(
        cls,
        message: DiscordMessage,
        admission: Admission,
        server: ServerState,
        outlet: Outlet[R],
        *,
        triggerer: MemberInfo | None,
        posted_by: int | None = None,
    ) -> TurnJob[R]:
        """The job of an admitted message: its personas reply to it."""
        turn = message_turn(message, admission.personas)
        return cls(turn, outlet, admission.personas, server, admission.author, triggerer, posted_by)


@dataclass(frozen=True)
class TurnResult(Generic[R]):
    """One persona turn: its prompt record and what the outlet delivered (None when no reply was)."""

    record: PromptRecord
    reply: R | None


def build_chat_turn(
    job: TurnJob[R], persona: PersonaInfo, index: int, *, now_ms: int, short_term_memory: ShortTermNote | None = None
) -> ChatTurn:
    """The ``ChatTurn`` of the ``index``-th persona of the job, with its note of the channel. Every
    surface offers Regenerate on a reply (``chatcontext.core.regeneration`` decides for which turns)."""
    outlet, server = job.outlet, job.server
    trigger = job.locked_turn.incoming.message
    user_row = job.author.user_row if job.author else None
    blacklisted = bool(job.author and job.author.blacklisted)
    bot_user = outlet.bot_user
    return ChatTurn(
        locked_turn=job.locked_turn,
        persona=persona,
        all_personas=server.personas,
        server=server.config,
        channel_name=outlet.channel_name,
        bot_user=bot_user,
        now_ms=now_ms,
        user_row=user_row,
        main_persona=server.main_persona,
        persona_index=index,
        total_personas=len(job.personas),
        channel_description=outlet.channel_description,
        thread_parent_id=outlet.thread_parent_id,
        triggerer=triggerer_naming(
            server.config, persona, user_row, job.triggerer, trigger.author, blacklisted=blacklisted
        ),
        is_self_message=trigger.author.id == bot_user.id,
        fast_regeneration_actions=(REGENERATE,),
        short_term_memory=short_term_memory,
        history_anchor_id=WINDOWS.anchor(job.locked_turn.channel_id, persona.persona_id),
    )
