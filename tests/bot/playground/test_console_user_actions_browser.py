"""Issue 32 items 1, 2 and 5 in a real browser, with the harness of test_user_view_browser.py (Debian's
Chromium driven by tests/bot/playground/browser/console_user_actions.mjs against ``manage.py serve`` on a
fresh demo database plus ``tests/bot/playground/user_view_setup.py``: alice moderates the demo server;
Mina is also on Day Larks, which alice does not moderate).

The privacy dropdown of Jun (Partial) shows Partial, and Change as it stands keeps it and returns to
Jun's page naming him; a memory edited from Mina's page returns there; blacklisting Mina from her page
offers only alice's server and says it is an opt-out, not a ban; forget-me's confirmation for Mina,
cancelled, returns to her page; blacklisting Sora from the users list returns to the list naming her.
Screenshots: artifacts/console-privacy-preselected.png, console-memory-edited.png,
console-blacklist-form.png, console-blacklisted.png, console-forget-confirmation.png,
console-blacklist-action.png, console-blacklist-action-done.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from personas.management.commands.load_demo import DEMO_SERVER_NAME
from personas.models import PrivacyLevel
from tests.bot.playground.user_view_setup import OTHER_SERVER, walk_as_alice

pytestmark = pytest.mark.slow

MEMORY = "{user} is studying for a chemistry exam"
EDITED = "{user} is studying for a physics exam"
# The view shows a memory with its names filled in; the edit form keeps the template.
MEMORY_SHOWN, EDITED_SHOWN = (text.format(user="Mina") for text in (MEMORY, EDITED))


def test_a_moderator_keeps_privacy_edits_a_memory_and_blacklists_without_losing_her_place(demo_var_dir: Path) -> None:
    result = walk_as_alice(
        demo_var_dir,
        "console_user_actions.mjs",
        PG_PARTIAL_USER="jun",
        PG_MEMBER="mina",
        PG_LIST_USER="sora",
        PG_MEMORY_TEXT=MEMORY_SHOWN,
        PG_EDITED_TEXT=EDITED,
    )

    assert result["ok"], result.get("error") or result
    partial = PrivacyLevel.PARTIAL.label
    assert result["privacyShown"] == partial
    assert result["privacyLanded"] and result["privacyMessages"] == [f"Privacy level set to {partial} for Jun."]
    assert result["privacyHeading"] == "Privacy level: Partial"

    assert result["memoryLanded"] and any("was changed successfully" in m for m in result["memoryMessages"])
    assert any(EDITED_SHOWN in m for m in result["memoriesAfterEdit"])
    assert not any(MEMORY_SHOWN in m or "{user}" in m for m in result["memoriesAfterEdit"])

    assert result["blacklistServers"] == [DEMO_SERVER_NAME] and OTHER_SERVER not in result["blacklistHelp"]
    assert result["blacklistPreselected"] == DEMO_SERVER_NAME
    assert "opt-out, not a ban" in result["blacklistHelp"]
    assert result["blacklistMessages"] == [f"Mina: on the personalization blacklist of {DEMO_SERVER_NAME}."]
    assert DEMO_SERVER_NAME in result["blacklistShown"] and "asked not to be personalized" in result["blacklistShown"]
    assert "personalization blacklist" in result["changePageLink"]

    assert result["forgetTitle"] == "Forget Mina?" and result["forgetCancelled"]
    # Forget-me spans every server: Day Larks' memory, reminder and record are counted too.
    assert {"Personal memories: 4", "Reminders: 2", "Prompt records: 2"} <= set(result["forgetCounts"])

    assert result["listTitle"] == "Personalization blacklist: Sora"
    assert result["listMessages"] == [f"Sora: on the personalization blacklist of {DEMO_SERVER_NAME}."]

    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for path in result["screenshots"]:
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
