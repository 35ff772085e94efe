"""Named fixture users, healthchecks-style: alice moderates server A, bob moderates server B,
charlie is a non-staff account. Each server has a persona, a member and a prompt record."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chatcontext.models import PromptRecord
from personas.models import (
    ApiToken,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    Reminder,
    Server,
    ServerMember,
)
from tests.cast import cast


def make_server(letter: str, disc_id: str) -> dict[str, object]:
    server = Server.objects.create(server_disc_id=disc_id, name=f"Server {letter}")
    persona = Persona.objects.create(server=server, persona_nickname=f"Persona{letter}", trigger_words=["hey"])
    user = DiscordUser.objects.create(user_disc_id=f"{disc_id}1", username=f"member_{letter.lower()}")
    ServerMember.objects.create(server=server, user_disc_id=user.user_disc_id, username=user.username)
    memory = PersonalMemory.objects.create(
        user=user, persona_lineage_id=persona.persona_lineage_id, content=f"secret memory of {letter}"
    )
    reminder = Reminder.objects.create(
        server=server,
        channel_disc_id="77",
        user_discord_id=user.user_disc_id,
        reminder_purpose=f"reminder of {letter}",
        reminder_time=datetime(2030, 1, 1, tzinfo=UTC),
        persona=persona,
    )
    PersonalizationBlacklist.objects.create(server=server, user_disc_id=f"{disc_id}9")
    record = PromptRecord.objects.create(
        server=server,
        channel_disc_id="77",
        channel_name="general",
        persona=persona,
        persona_nickname=persona.persona_nickname,
        created_at=datetime(2026, 11, 30, tzinfo=UTC),
        context_items=[{"role": "user", "tag": "dialogue_history", "text": f"text of {letter}", "tokens": 3}],
        snapshot={"format": "tomori-turn-snapshot/1", "marker": f"snapshot of {letter}"},
        subject_user_ids=[user.user_disc_id],
    )
    return {
        "server": server,
        "persona": persona,
        "user": user,
        "memory": memory,
        "reminder": reminder,
        "record": record,
    }


@pytest.fixture
def world(db):  # type: ignore[no-untyped-def]
    a = make_server("A", "5100")
    b = make_server("B", "5200")
    people = cast(a["server"], b["server"])
    _, token_a_read = ApiToken.issue(a["server"], "dash A", ApiToken.Scope.READ)
    _, token_a_write = ApiToken.issue(a["server"], "admin A", ApiToken.Scope.READ_WRITE)
    _, token_b_write = ApiToken.issue(b["server"], "admin B", ApiToken.Scope.READ_WRITE)
    return {
        "a": a,
        "b": b,
        **people.accounts(),
        "token_a_read": token_a_read,
        "token_a_write": token_a_write,
        "token_b_write": token_b_write,
    }


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
