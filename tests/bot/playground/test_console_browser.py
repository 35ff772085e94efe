"""The moderators' console in a real browser (issue 16 acceptance): Debian's Chromium, headless, driven
by playwright-core from Node (tests/bot/playground/browser/console.mjs), against ``manage.py serve`` on a
fresh SQLite database with the demo server, as ``make run`` serves it (DEBUG on, no SECRET_KEY).

The superuser adds alice as a moderator of the demo server in one step and gets a set-password link;
alice chooses her password through it, signs in, saves a personal memory for Mina with the tags typed
as "music, jazz", and opens Mina's user page, which fits a 1400 px window. Screenshots land in
artifacts/console-*.png (git-ignored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.playground.chromium import ROOT, run_in_chromium

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "artifacts"
WINDOW_WIDTH = 1400


def test_a_superuser_adds_a_moderator_who_saves_a_memory_with_comma_separated_tags(demo_var_dir: Path) -> None:
    result, log = run_in_chromium(
        demo_var_dir, "console.mjs", PG_MODERATOR="alice", PG_MEMBER="mina", PG_ARTIFACTS=str(ARTIFACTS)
    )

    assert result["ok"], result.get("error") or result
    assert result["serverPageModerators"].startswith("none yet")
    assert result["serverPageWidth"] <= WINDOW_WIDTH
    assert result["preselectedServer"] == "Night Owls Demo"
    assert "created" in result["usernameHelp"] and "no other permission" in result["usernameHelp"]
    assert "Created the staff account alice." in result["addMessages"]
    assert any("No password yet for alice" in m for m in result["addMessages"])
    assert result["linkPath"].startswith("/account/set-password/")
    assert "Log in" in result["passwordSet"]
    # alice sees her server's console and nothing of the platform's accounts or schedules.
    assert {"People", "Personas and memories", "Turns"} <= set(result["moderatorSections"])
    assert "Discord users" in result["moderatorModels"]
    assert not {"Users", "Groups", "Periodic tasks"} & set(result["moderatorModels"])
    assert result["memoryErrors"] == []
    assert any("was added successfully" in m for m in result["memoryMessages"])
    assert result["savedTags"] == "music, jazz"
    assert "Separate tags with commas" in result["tagsHelp"]
    assert result["userPageWidth"] <= WINDOW_WIDTH
    assert result["oneLineInputs"] == ["input:text", "input:text", "input:text"]
    assert "music, jazz" in result["inlineMemoryTags"]
    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for path in result["screenshots"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The password link is a credential: the server's log never shows it.
    assert result["linkPath"] not in log
