"""Turn planning: one locked turn per admitted trigger, run in order per channel.

A per-channel asyncio lock serialises the turns of a channel. A trigger that arrives while a turn
of its channel runs is queued behind it and marked ``is_from_queue`` (build-context.md §9 BC9-04:
its persona turns get a ``reply_notice_state`` and a queued-reply directive). The holder of the
lock drains the queue in arrival order, so replies come out in the order the triggers came in.
Reminder turns (``bot.discord.reminder_turns``) take the same lock and queue; the playground has a
planner of its own (``bot.playground.service.PLANNER``).

Locks live in this process only: every message of a guild arrives on that guild's shard, and a
shard belongs to exactly one bot process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from chatcontext.core.types import LockedTurn

logger = logging.getLogger(__name__)

DEFAULT_MAX_QUEUE = 10

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class PlannedTurn(Protocol):
    """Anything carrying a locked turn (a ``TurnJob``, or the playground's job around one)."""

    @property
    def locked_turn(self) -> LockedTurn: ...


J = TypeVar("J", bound=PlannedTurn)


@dataclass
class _ChannelState(Generic[J]):
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    queue: deque[J] = field(default_factory=deque)


class TurnPlanner(Generic[J]):
    def __init__(
        self, run_turn: Callable[[J], Awaitable[object]], clock: Clock, *, max_queue: int = DEFAULT_MAX_QUEUE
    ) -> None:
        self._run_turn = run_turn
        self._clock = clock
        self.max_queue = max_queue
        self._channels: dict[str, _ChannelState[J]] = {}

    def queued(self, channel_id: str) -> int:
        state = self._channels.get(channel_id)
        return len(state.queue) if state else 0

    def is_busy(self, channel_id: str) -> bool:
        state = self._channels.get(channel_id)
        return bool(state and state.lock.locked())

    async def submit(self, job: J) -> bool:
        """Run ``job`` now, or queue it behind the running turn of its channel.

        Returns False when the channel's queue is full and the trigger is dropped. Failures of one
        turn are logged and never stop the turns queued behind it.
        """
        turn = job.locked_turn
        state = self._channels.setdefault(turn.channel_id, _ChannelState())
        if state.lock.locked():
            if len(state.queue) >= self.max_queue:
                logger.warning("channel queue full (%d); trigger dropped", self.max_queue)
                return False
            # BC9-04/BC8-08 point a queued reply at the message that waited; a reminder turn or a
            # command's turn (/impersonate, /scene) answers no message (its trigger only anchors
            # the channel), so it is never marked.
            incoming = turn.incoming
            incoming.is_from_queue = not (
                incoming.reminder_data is not None or incoming.is_user_impersonation or incoming.scene_turn is not None
            )
            turn.queue_depth = len(state.queue) + 1
            state.queue.append(job)
            return True
        async with state.lock:
            current: J | None = job
            while current is not None:
                current.locked_turn.locked_at_ms = self._clock()
                try:
                    await self._run_turn(current)
                except Exception:
                    logger.exception("turn failed")
                current = state.queue.popleft() if state.queue else None
        # Nothing can have been queued since the loop ended: no await separates these lines.
        if not state.queue and not state.lock.locked():
            self._channels.pop(turn.channel_id, None)
        return True
