"""Fast regeneration (build-context.md BC9-06, BC9-10; issue 30 item 4).

A turn that offers fast regeneration gets a recorder: the surface records the messages the persona's
reply was posted as (``record_turn_output_message``, BC9-06), and the Regenerate action later asks the
channel's recorder whether a message is one it may replace. Creating a recorder clears the channel's
earlier entries (BC9-10), so only the channel's latest turn can be regenerated; the persona turns of
one locked turn share its recorder, so each of their replies can be. Recorders live in this process,
like the planner's channel locks (a channel's turns all run in one process).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatcontext.core.types import ChatTurn, ChatTurnContext, LockedTurn, StreamingContext

# The actions a regenerable reply offers; a surface passes them on the turn (``ChatTurn``).
REGENERATE = "regenerate"


@dataclass(eq=False)
class FastRegenerationRecorder:
    channel_id: str
    locked_turn: LockedTurn
    # (message id, persona id) of every message the turn's replies were posted as, in order.
    outputs: list[tuple[str, int | None]] = field(default_factory=list)

    def record(self, message_id: str, persona_id: int | None) -> None:
        self.outputs.append((message_id, persona_id))

    def holds(self, message_id: str) -> bool:
        return any(recorded == message_id for recorded, _ in self.outputs)


def fast_regeneration_offered(turn: ChatTurn, streaming: StreamingContext) -> bool:
    """BC9-10: a guild message with at least one enabled action, not a persona job, an impersonation,
    a stop response or a reminder, and cross-channel messages not disabled (after overrides)."""
    incoming = turn.incoming
    return (
        not turn.server.is_dm
        and bool(turn.fast_regeneration_actions)
        and not incoming.is_persona_job
        and not incoming.is_user_impersonation
        and not incoming.is_stop_response
        and incoming.reminder_recipient_id is None
        and incoming.reminder_data is None
        and not streaming.disable_cross_channel_message
    )


def record_turn_output_message(ctx: ChatTurnContext, message_id: str, persona_id: int | None) -> None:
    """BC9-06: delegates to the turn's recorder when it has one."""
    if ctx.fast_regeneration_recorder is not None:
        ctx.fast_regeneration_recorder.record(message_id, persona_id)


class ChannelRecorders:
    """The recorder of each channel's latest regenerable turn. One per process, owned by the shell
    (``chatcontext.pipeline.FAST_REGENERATION``): like the planner's channel locks, it lives in the
    process that runs the channel's turns."""

    def __init__(self) -> None:
        self._latest: dict[str, FastRegenerationRecorder] = {}

    def start(self, turn: ChatTurn, streaming: StreamingContext) -> FastRegenerationRecorder | None:
        """Step 3 of the stage (BC9-10): the turn's recorder, or None when it is not offered."""
        if not fast_regeneration_offered(turn, streaming):
            return None
        channel_id = turn.locked_turn.channel_id
        current = self._latest.get(channel_id)
        if current is not None and current.locked_turn is turn.locked_turn:
            return current  # a later persona of the same locked turn
        recorder = FastRegenerationRecorder(channel_id, turn.locked_turn)
        self._latest[channel_id] = recorder
        return recorder

    def latest(self, channel_id: str) -> FastRegenerationRecorder | None:
        """The recorder of the channel's latest regenerable turn."""
        return self._latest.get(channel_id)
