"""Per-channel lock and queue (issue 6; build-context.md BC9-04 is_from_queue)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.conversation.planner import TurnPlanner
from chatcontext.core.types import Author, ChatIncoming, DiscordMessage, LockedTurn, ReminderData


@dataclass
class Job:
    locked_turn: LockedTurn


def locked(message_id: str, channel_id: str = "42", reminder: ReminderData | None = None) -> Job:
    message = DiscordMessage(id=message_id, channel_id=channel_id, author=Author(id="111"), created_timestamp=0)
    return Job(LockedTurn(incoming=ChatIncoming(message=message, reminder_data=reminder), channel_id=channel_id))


class Recorder:
    def __init__(self) -> None:
        self.started: list[tuple[str, bool, int]] = []
        self.gates: dict[str, asyncio.Event] = {}

    async def run(self, job: Job) -> None:
        turn = job.locked_turn
        message_id = turn.incoming.message.id
        self.started.append((message_id, turn.incoming.is_from_queue, turn.queue_depth))
        gate = self.gates.get(message_id)
        if gate is not None:
            await gate.wait()
        if message_id == "boom":
            raise RuntimeError("turn failed")


async def test_triggers_during_a_turn_are_queued_and_run_in_order_with_is_from_queue():
    recorder = Recorder()
    recorder.gates["1"] = asyncio.Event()
    planner = TurnPlanner(recorder.run, clock=lambda: 1234)

    first = asyncio.create_task(planner.submit(locked("1")))
    await asyncio.sleep(0)
    assert planner.is_busy("42")
    assert await planner.submit(locked("2")) is True
    assert await planner.submit(locked("3")) is True
    assert planner.queued("42") == 2
    recorder.gates["1"].set()
    await first

    assert recorder.started == [("1", False, 0), ("2", True, 1), ("3", True, 2)]
    assert not planner.is_busy("42") and planner.queued("42") == 0


async def test_channels_do_not_wait_for_each_other():
    recorder = Recorder()
    recorder.gates["1"] = asyncio.Event()
    planner = TurnPlanner(recorder.run, clock=lambda: 0)

    first = asyncio.create_task(planner.submit(locked("1", channel_id="A")))
    await asyncio.sleep(0)
    await planner.submit(locked("2", channel_id="B"))
    assert recorder.started[-1] == ("2", False, 0)
    recorder.gates["1"].set()
    await first


async def test_a_failing_turn_does_not_stop_the_queue_and_a_full_queue_drops():
    recorder = Recorder()
    recorder.gates["boom"] = asyncio.Event()
    planner = TurnPlanner(recorder.run, clock=lambda: 0, max_queue=1)

    first = asyncio.create_task(planner.submit(locked("boom")))
    await asyncio.sleep(0)
    assert await planner.submit(locked("2")) is True
    assert await planner.submit(locked("3")) is False
    recorder.gates["boom"].set()
    await first

    assert [m for m, _, _ in recorder.started] == ["boom", "2"]


async def test_bc9_04_a_queued_reminder_turn_waits_its_turn_but_is_not_a_queued_reply():
    recorder = Recorder()
    recorder.gates["1"] = asyncio.Event()
    planner = TurnPlanner(recorder.run, clock=lambda: 0)

    first = asyncio.create_task(planner.submit(locked("1")))
    await asyncio.sleep(0)
    assert await planner.submit(locked("2", reminder=ReminderData("water the plants", self_reminder=True))) is True
    assert recorder.started == [("1", False, 0)]
    recorder.gates["1"].set()
    await first

    assert recorder.started == [("1", False, 0), ("2", False, 1)]
