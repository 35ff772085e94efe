"""The playground in a real browser (issue 8 acceptance): Debian's Chromium, headless, driven by
playwright-core from Node (tests/bot/playground/browser/playground.mjs), against ``manage.py serve`` (HTTP
and websockets) on a fresh SQLite database with the demo server loaded, as ``make run`` serves it.

The script logs in to the admin, opens the playground, picks the demo server, creates a channel,
speaks as Mina (MINIMAL) mentioning the persona, watches the reply stream in and the prompt panel
show Mina's profile block, speaks as Rei (FULL: not answered), speaks as Mina again and checks that
Rei's words are in the conversation but not in the new prompt. The screenshot lands in
artifacts/playground.png (git-ignored; CI keeps it as an artifact).
"""

from __future__ import annotations

import re

import pytest

from tests.bot.playground.chromium import ARTIFACTS, run_in_chromium
from tests.bot.playground.conftest import MINA, REI

pytestmark = pytest.mark.slow

SCREENSHOT = ARTIFACTS / "playground.png"
START_TIMEOUT_S = 90


def test_the_playground_in_chromium_answers_shows_the_prompt_and_keeps_a_full_users_words_out(demo_var_dir):
    result, _ = run_in_chromium(
        demo_var_dir,
        "playground.mjs",
        PG_MINIMAL_ID=MINA,
        PG_FULL_ID=REI,
        PG_PROFILE_MARKER="Pronouns: she/her",
        PG_SCREENSHOT=str(SCREENSHOT),
    )

    assert result["ok"], result.get("error") or result
    assert result["echoBanner"] and result["personas"] == ["Tomori", "Pip"]
    assert result["minimalIdentity"].endswith("privacy MINIMAL") and result["fullIdentity"].endswith("privacy FULL")
    assert result["streamed"]  # the reply streamed in before the final message replaced it
    assert result["firstReply"].startswith("[echo] Tomori:") and "studying for my exam" in result["firstReply"]
    first = result["firstPrompt"]
    assert first["hasProfileMarker"] and first["hasFirstMessage"] and "Minnie" in first["profileBlock"]
    assert result["fullSkip"] == "privacy_full" and "FULL" in result["fullNote"] and "FULL" in result["privacyNote"]
    assert result["fullNoteAfterReload"] == result["fullNote"]  # kept with the message, not only in the page
    second = result["secondPrompt"]
    assert second["recordId"] != first["recordId"] and second["hasQuestion"]
    assert not second["hasSecret"] and second["fullUserExcluded"]
    assert result["secretShownInConversation"]  # the page shows what Rei wrote; only the prompt leaves it out
    # The echo provider reports no token counts: estimated, priced at the demo's example prices.
    assert re.fullmatch(r"\d+ in \+ \d+ out tokens, estimated \(characters ÷ 4\) · cost 0\.\d+", result["recordTokens"])
    assert re.fullmatch(r"2 turns\n[\d,]+ tokens\ncost 0\.\d+", result["serverUsageDay"]), result["serverUsageDay"]
    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for picture in (SCREENSHOT, ARTIFACTS / "inspector-record-cost.png", ARTIFACTS / "server-list-usage.png"):
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
