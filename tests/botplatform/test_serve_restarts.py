"""``serve`` restarts its bot child with capped exponential backoff (issue 27 item 4)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading

import pytest

from bot.discord.status import BotStatus, report, report_restart
from botplatform.management.commands.serve import BotProcess, restart_delays


def test_the_delays_double_up_to_the_cap():
    assert list(itertools.islice(restart_delays(1, 60), 9)) == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_a_child_that_keeps_exiting_is_restarted_each_time_with_the_next_delay():
    noted: list[tuple[int, float]] = []
    three = threading.Event()

    def on_restart(code: int, delay: float) -> None:
        noted.append((code, delay))
        if len(noted) == 3:
            three.set()

    # Short delays stand in for the real ones: what is checked is which delay each restart takes.
    short = [0.01, 0.02, 0.03, 0.04, 0.05]
    bot = BotProcess([sys.executable, "-c", "raise SystemExit(3)"], delays=lambda: iter(short), on_restart=on_restart)
    bot.start()
    assert three.wait(timeout=60)
    bot.stop()

    assert noted[:3] == [(3, 0.01), (3, 0.02), (3, 0.03)]


def test_a_child_stopped_by_serve_is_not_restarted():
    noted: list[tuple[int, float]] = []
    bot = BotProcess([sys.executable, "-c", "import time; time.sleep(60)"], on_restart=lambda *a: noted.append(a))
    bot.start()
    while bot.proc is None:
        threading.Event().wait(0.05)
    bot.stop()

    assert bot.proc.returncode is not None and noted == []


@pytest.mark.django_db
def test_a_restart_keeps_the_childs_own_error_and_counts():
    report(BotStatus.State.FAILED, last_error="Cannot reach Discord (timeout)")
    report_restart(2, 8)
    row = BotStatus.objects.get()
    assert row.state == BotStatus.State.RESTARTING and row.restarts == 1
    assert row.last_error == "Cannot reach Discord (timeout) (exited with status 2; restarting in 8 s)"

    # A child that died before it could say why (killed, crashed on import).
    report(BotStatus.State.STARTING)
    report_restart(-9, 16)
    row = BotStatus.objects.get()
    assert row.restarts == 2 and row.last_error == "exited with status -9; restarting in 16 s"


def test_a_stop_while_the_child_is_being_started_leaves_no_child_running(monkeypatch: pytest.MonkeyPatch) -> None:
    # serve is stopped (SIGTERM) just as the supervisor, its "still running?" check passed, starts a
    # child: that child must be ended too, not left running after serve is gone.
    launching, stop_returned = threading.Event(), threading.Event()
    launched: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(command: list[str]) -> subprocess.Popen[bytes]:
        launching.set()
        stop_returned.wait(timeout=5)  # a stop() that waits for this start meets the bound instead
        launched.append(real_popen(command))
        return launched[-1]

    monkeypatch.setattr(subprocess, "Popen", popen)
    bot = BotProcess([sys.executable, "-c", "import time; time.sleep(60)"], on_restart=lambda *a: None)
    bot.start()
    try:
        assert launching.wait(timeout=60)
        bot.stop()
        stop_returned.set()
        while not launched:
            threading.Event().wait(0.05)
        assert launched[0].poll() is not None
    finally:
        for proc in launched:
            proc.kill()
            proc.wait()
