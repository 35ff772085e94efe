"""Rows the user-view browser test adds to the demo (``manage.py shell -c``, before serving): alice,
a moderator of the demo server only, with a password; a second server, Day Larks, where Mina is a
member with a memory, a reminder, a blacklist entry and a prompt record that alice must never see;
and one priced prompt record of the demo server about Mina, for the inspector's cost."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from chatcontext.models import PromptRecord
from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID, DEMO_USERS
from personas.models import (
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    Reminder,
    Server,
    ServerMember,
    ServerModerator,
)
from tests.bot.playground.chromium import ARTIFACTS, run_in_chromium

OTHER_SERVER = "Day Larks"
OTHER_TEXTS = ("Mina's secret on Day Larks", "Day Larks reminder for Mina", "blacklisted on Day Larks")
ALICE_PASSWORD = "owls-user-view-42"


def _record(server: Server, persona: Persona, channel: str, **fields: object) -> PromptRecord:
    mina = DEMO_USERS["mina"]
    return PromptRecord.objects.create(
        server=server,
        channel_disc_id="990001",
        channel_name=channel,
        persona=persona,
        persona_nickname=persona.persona_nickname,
        created_at=timezone.now() - timedelta(minutes=5),
        subject_user_ids=[mina],
        participant_target_index={"targets": [{"display_label": "Mina", "aliases": [{"value": "mina"}]}]},
        **fields,
    )


def run() -> None:
    demo = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
    mina = DiscordUser.objects.get(user_disc_id=DEMO_USERS["mina"])
    alice = get_user_model().objects.create_user("alice", password=ALICE_PASSWORD, is_staff=True)
    ServerModerator.objects.create(server=demo, user=alice)

    other = Server.objects.create(server_disc_id="123456789012345678", name=OTHER_SERVER)
    lark = Persona.objects.create(server=other, persona_nickname="Lark", trigger_words=["lark"])
    ServerMember.objects.create(server=other, user_disc_id=mina.user_disc_id, username="mina")
    PersonalMemory.objects.create(user=mina, persona_lineage_id=lark.persona_lineage_id, content=OTHER_TEXTS[0])
    Reminder.objects.create(
        server=other,
        channel_disc_id="990002",
        user_discord_id=mina.user_disc_id,
        reminder_purpose=OTHER_TEXTS[1],
        reminder_time=timezone.now() + timedelta(days=1),
        persona=lark,
    )
    PersonalizationBlacklist.objects.create(server=other, user_disc_id=mina.user_disc_id, reason=OTHER_TEXTS[2])
    _record(other, lark, "larks-porch")

    tomori = Persona.objects.get(server=demo, persona_nickname="Tomori")
    _record(
        demo,
        tomori,
        "lounge",
        context_items=[{"role": "user", "tag": "dialogue_history", "text": "Mina: good evening", "tokens": 6}],
        reply_text="Good evening, Mina!",
        provider="openai",
        model_name="demo-model",
        usage={"prompt_tokens": 1200, "completion_tokens": 80},
        input_tokens=1200,
        output_tokens=80,
        tokens_measured=True,
        cost=Decimal("0.000228"),
    )


def walk_as_alice(var_dir: Path, script: str, **script_env: str) -> dict[str, Any]:
    """Run a browser script as alice on the demo plus ``user_view_setup``'s rows; its JSON result."""
    result, _ = run_in_chromium(
        var_dir,
        script,
        setup="from tests.bot.playground.user_view_setup import run; run()",
        PG_MODERATOR="alice",
        PG_MODERATOR_PASSWORD=ALICE_PASSWORD,
        PG_ARTIFACTS=str(ARTIFACTS),
        **script_env,
    )
    return result
