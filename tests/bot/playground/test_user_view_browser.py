"""The user view of the moderators' console in a real browser (issue 16 acceptance), with the harness of
test_console_browser.py: Debian's Chromium, headless, driven by playwright-core
(tests/bot/playground/browser/user_view.mjs) against ``manage.py serve`` on a fresh demo database, plus the
rows of ``tests/bot/playground/user_view_setup.py`` (alice moderates the demo server; Mina is also on
Day Larks, which alice does not moderate).

alice sees Mina's global memory, which reaches her server's prompts, and nothing of Day Larks; the
export she downloads is the API's export of the same server; a memory she deletes comes back from
"Deleted personal memories"; ``?q=mina`` finds Mina's record, whose page shows its cost. The
superuser's server list shows the turns, tokens and cost. Screenshots: artifacts/console-user-view.png,
console-record-cost.png, console-server-list.png (and console-memory-restored.png).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID
from tests.bot.playground.conftest import MINA
from tests.bot.playground.user_view_setup import OTHER_SERVER, OTHER_TEXTS, walk_as_alice

pytestmark = pytest.mark.slow

WINDOW_WIDTH = 1400
# Memories are shown with names for `{user}` (issue 32 item 3): Mina is her Discord name.
FORGOTTEN = "Mina is studying for a chemistry exam"


def test_a_moderator_s_user_view_export_and_restore_in_chromium(demo_var_dir: Path) -> None:
    result = walk_as_alice(
        demo_var_dir,
        "user_view.mjs",
        PG_MEMBER="mina",
        PG_MEMBER_ID=MINA,
        PG_SERVER_DISC_ID=DEMO_SERVER_DISC_ID,
        PG_FORGET_TEXT=FORGOTTEN,
    )

    assert result["ok"], result.get("error") or result
    view = result["viewText"]
    # The global memory reaches alice's server's prompts: shown, read-only for her.
    assert "Mina prefers green tea" in view
    assert any(h.startswith("Global (lineage 0)") and h.endswith("(read-only)") for h in result["lineages"])
    assert FORGOTTEN in view and "apply on every server" in view
    assert result["privacyHides"].startswith("What it hides: Nothing.")
    assert not [t for t in (OTHER_SERVER, *OTHER_TEXTS, "larks-porch") if t in view]
    assert result["viewWidth"] <= WINDOW_WIDTH

    assert result["downloadName"] == f"tomori-user-{MINA}.json"
    assert result["apiStatus"] == 200
    assert result["downloaded"] == result["api"]
    assert OTHER_TEXTS[0] not in str(result["api"])

    assert any("deleted successfully" in m for m in result["deleteMessages"])
    assert "Restored 1 memory." in result["restoreMessages"]
    assert any(FORGOTTEN in m for m in result["memoriesAfterRestore"])

    assert len(result["searchRows"]) == 1 and "lounge" in result["searchRows"][0]
    assert "measured by the provider" in result["recordTokens"] and "cost 0.000228" in result["recordTokens"]
    assert any("Night Owls Demo" in row and "1 turn" in row for row in result["serverRows"])

    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for path in result["screenshots"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
