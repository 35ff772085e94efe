"""Rows the records-list browser test adds to the demo (``manage.py shell -c``, before serving): four
turns of the demo server. Two of Tomori in #lounge triggered by Mina, a failed one of Pip in #garden
triggered by Rei (privacy FULL: the history left her message out, only the raw snapshot holds it), and
a newer one of Tomori in #garden with a long reply. And a playground channel with a topic, for the
playground's page on a phone."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from bot.playground import store
from chatcontext.models import PromptRecord
from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID, DEMO_USERS
from personas.models import Persona, Server

MINA_TRIGGER = "Could you quiz me on organic chemistry tonight?"
MINA_REPLY = "Of course, Mina! First question: what makes a carbon atom chiral?"
REI_SECRET = "Rei's words that no moderator may read"
LONG_REPLY = "A very long answer " * 40
FAILURE = "The provider did not answer in time."


def _record(persona: Persona, channel: str, minutes_ago: int, trigger: tuple[str, str, str], **fields: Any) -> None:
    """A turn whose trigger is message ``trigger[0]`` by user ``trigger[1]`` saying ``trigger[2]``; the
    history keeps it unless ``fields`` says otherwise."""
    message_id, author, text = trigger
    history = [{"id": message_id, "author_id": author, "author_name": "Mina", "author_type": "user", "content": text}]
    PromptRecord.objects.create(
        **{
            "server": persona.server,
            "channel_disc_id": {"lounge": "990101", "garden": "990102"}[channel],
            "channel_name": channel,
            "persona": persona,
            "persona_nickname": persona.persona_nickname,
            "trigger_message_disc_id": message_id,
            "created_at": timezone.now() - timedelta(minutes=minutes_ago),
            "simplified_messages": history,
            "snapshot": {"messages": [{"id": message_id, "author": {"id": author}, "content": text}]},
            "provider": "openai",
            "model_name": "demo-model",
            "input_tokens": 123456,
            "output_tokens": 789,
            "tokens_measured": True,
            "cost": Decimal("12.345678"),
            "latency_ms": 1840,
            **fields,
        }
    )


def run() -> None:
    demo = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
    tomori = Persona.objects.get(server=demo, persona_nickname="Tomori")
    pip = Persona.objects.get(server=demo, persona_nickname="Pip")
    mina, rei = DEMO_USERS["mina"], DEMO_USERS["rei"]
    prompt = [{"role": "system", "tag": "persona", "text": "You are Tomori."}]
    _record(
        tomori,
        "lounge",
        40,
        ("1180000000000000001", mina, "Good evening!"),
        context_items=[*prompt, {"role": "user", "tag": "dialogue_history", "text": "Mina: Good evening!"}],
        reply_text="Good evening, Mina!",
    )
    _record(
        tomori,
        "lounge",
        30,
        ("1180000000000000002", mina, MINA_TRIGGER),
        context_items=[*prompt, {"role": "user", "tag": "dialogue_history", "text": f"Mina: {MINA_TRIGGER}"}],
        reply_text=MINA_REPLY,
    )
    _record(
        pip,
        "garden",
        20,
        ("1180000000000000003", rei, REI_SECRET),
        simplified_messages=[],
        error=FAILURE,
        latency_ms=30000,
        output_tokens=0,
    )
    _record(tomori, "garden", 10, ("1180000000000000004", mina, "Tell me everything."), reply_text=LONG_REPLY)
    store.create_channel(demo, "late-night-study-lounge", topic="Quiet study and chemistry questions", now_ms=0)
