"""The prompt records list in a real browser at 1280 px (issue 32 item 4), with the harness of
test_browser.py: Debian's Chromium, headless, driven by playwright-core
(tests/bot/playground/browser/records_list.mjs) against ``manage.py serve`` on a fresh demo database plus
the turns of ``tests/bot/playground/records_list_setup.py``.

Every column (tokens, cost, latency, failed, the trigger and reply previews) ends inside the window;
a privacy-FULL author's trigger is never previewed, though the record's snapshot holds it; the failed
and channel filters narrow the list; "Compare the two selected" opens the later turn's inspector page
diffed against the earlier one. The users, memories and servers lists fit the window too.
Screenshots: artifacts/records-*.png (git-ignored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.playground.chromium import ARTIFACTS, run_in_chromium
from tests.bot.playground.records_list_setup import LONG_REPLY, MINA_REPLY, MINA_TRIGGER, REI_SECRET

pytestmark = pytest.mark.slow

WINDOW_WIDTH = 1280
PHONE_WIDTH = 390


def test_the_records_list_shows_previews_and_numbers_filters_and_compares_any_two_turns(demo_var_dir: Path) -> None:
    result, _ = run_in_chromium(
        demo_var_dir,
        "records_list.mjs",
        setup="from tests.bot.playground.records_list_setup import run; run()",
        PG_FIRST_TRIGGER="Good evening!",
        PG_SECOND_TRIGGER=MINA_TRIGGER,
        PG_ARTIFACTS=str(ARTIFACTS),
    )

    assert result["ok"], result.get("error") or result
    # Nothing scrolls sideways: not the page, not the list inside it, and every header ends in the window.
    fits = {"records": result["recordsFit"], **result["listFits"]}
    for name, fit in fits.items():
        assert fit["pageWidth"] <= WINDOW_WIDTH and fit["overflow"] == 0, (name, fit)
        assert max(fit["rightEdges"]) <= WINDOW_WIDTH, (name, fit)
    assert result["columns"][1:] == [
        "created_at",
        "persona_name",
        "channel",
        "tokens",
        "cost",
        "latency",
        "failed",
        "turn",
    ]
    rows = result["rows"]
    assert [row["persona_name"] for row in rows] == ["Tomori", "Pip", "Tomori", "Tomori"]  # newest first
    lounge = rows[2]
    assert (lounge["tokens"], lounge["cost"], lounge["latency"], lounge["failed"]) == (
        "123456 / 789",
        "12.345678",
        "1840",
        "-",
    )
    assert (lounge["trigger"]["title"], lounge["reply"]["title"]) == (MINA_TRIGGER, MINA_REPLY)
    # A long reply is cut by the column, never widening it; the title keeps the preview.
    assert rows[0]["reply"]["cut"] and rows[0]["reply"]["title"].startswith(LONG_REPLY[:100])
    # Rei is FULL: her trigger is not in the history, so neither the row nor the page shows it.
    assert rows[1]["failed"] == "failed" and rows[1]["trigger"]["text"] == "–"
    assert REI_SECRET not in result["pageText"] and REI_SECRET not in str(rows)
    assert {"By outcome", "By persona", "By channel", "By source"} <= set(result["filterTitles"])
    assert [row["persona_name"] for row in result["failedRows"]] == ["Pip"]
    assert [row["trigger"]["title"] for row in result["loungeRows"]] == [MINA_TRIGGER, "Good evening!"]
    assert result["oneSelectedMessages"] == ["Select exactly two turns to compare."]
    assert "?against=" in result["compareUrl"]
    assert result["diffHeading"].startswith("Changes from prompt record")
    assert "-Mina: Good evening!" in result["diffLines"] and f"+Mina: {MINA_TRIGGER}" in result["diffLines"]
    # Issue 32 item 8: "View site" opens the playground, which fits a phone and starts as a MINIMAL member;
    # /favicon.ico is served (a 404 would be in failedResponses).
    assert result["viewSiteHref"] == "/playground/"
    assert result["phoneWidth"] <= PHONE_WIDTH, result["phoneWidth"]
    assert result["phoneSpeaker"].endswith("privacy MINIMAL")
    assert any(label.startswith("Topic") for label in result["phoneLabels"])
    assert "Message as the speaker above" in result["phoneLabels"]
    assert result["favicon"] == 200
    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for path in result["screenshots"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
