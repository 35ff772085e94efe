"""A server with its main persona, as the bot registers it on first contact."""

from __future__ import annotations

import itertools

import pytest
from django.apps import apps

from personas.actions import Actor, register_server
from personas.models import Server

_ids = itertools.count(7100)


@pytest.fixture
def server() -> Server:
    return register_server(
        str(910_000_000_000_000_000 + next(_ids)),
        name="Saltmere",
        is_dm=False,
        locale=None,
        main_persona_nickname="Tomori",
        actor=Actor.system("tests"),
    )


def row_counts() -> dict[str, int]:
    """Every personas table, history included: a refused file writes none of them."""
    return {m._meta.label: m._default_manager.count() for m in apps.get_app_config("personas").get_models()}
