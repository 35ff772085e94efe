"""BC2-07a: the history window starts at the remembered anchor and moves several messages at once."""

from __future__ import annotations

import itertools

from chatcontext.history import step_window, window_size
from tests.chatcontext.turn_factory import message


def window(first: int, last: int) -> list:  # type: ignore[type-arg]
    return [message(message_id=str(700 + n), content=f"m{n}") for n in range(first, last + 1)]


def ids(messages: list) -> list[int]:  # type: ignore[type-arg]
    return [int(m.id) - 700 for m in messages]


def test_bc2_07a_the_window_holds_the_limit_on_average() -> None:
    assert window_size(50, 40, anchored=True) == 70
    assert window_size(50, 40, anchored=False) == 50


def test_bc2_07a_without_an_anchor_or_a_step_nothing_is_dropped() -> None:
    assert ids(step_window(window(1, 50), None, size=70, step=40)[0]) == list(range(1, 51))
    assert ids(step_window(window(1, 70), "705", size=70, step=0)[0]) == list(range(1, 71))


def test_bc2_07a_the_window_starts_at_the_anchor_while_it_is_fetched() -> None:
    kept, stepped = step_window(window(11, 80), "720", size=70, step=40)
    assert ids(kept)[0] == 20 and ids(stepped) == list(range(11, 20))


def test_bc2_07a_once_the_anchor_slid_out_the_oldest_step_go_at_once() -> None:
    kept, stepped = step_window(window(12, 81), "711", size=70, step=40)
    assert ids(kept) == list(range(52, 82)) and ids(stepped) == list(range(12, 52))


def test_bc2_07a_a_young_channel_keeps_everything_when_the_anchor_is_gone() -> None:
    kept, stepped = step_window(window(5, 30), "701", size=70, step=40)
    assert ids(kept) == list(range(5, 31)) and stepped == []


def test_bc2_07a_over_consecutive_turns_the_start_moves_once_per_step() -> None:
    """Two messages a turn: the first message of the window changes once in twenty turns."""
    anchor, starts = None, []
    for turn in range(80):
        newest = 2 * turn + 2
        size = window_size(50, 40, anchored=anchor is not None)
        kept, _ = step_window(window(max(1, newest - size + 1), newest), anchor, size=size, step=40)
        anchor = kept[0].id
        starts.append(ids(kept)[0])
    changes = sum(1 for a, b in itertools.pairwise(starts[30:]) if a != b)
    assert changes in (2, 3)
    assert all(30 <= newest - start + 1 <= 70 for newest, start in zip(range(62, 162, 2), starts[30:], strict=False))
