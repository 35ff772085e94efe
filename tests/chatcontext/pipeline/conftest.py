"""Assembling snapshot turns on the test database (rows loaded in a savepoint that is rolled back)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction

from chatcontext.core.config import StageConfig
from chatcontext.core.types import ChatTurnContext
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import (
    load_snapshot_rows,
    snapshot_turn,
    validate_snapshot,
)
from tests.paths import EXAMPLE


def example_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


def assemble(doc: dict[str, Any], *, config: StageConfig | None = None, **kwargs: Any) -> ChatTurnContext:
    """Validate, load the rows in a savepoint, run the stage on the default database, roll back."""
    validate_snapshot(doc)
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        ctx = build_turn_context(
            inputs.turn,
            inputs.transport,
            transcripts=inputs.transcripts,
            config=config or StageConfig(),
            **kwargs,
        )
        transaction.set_rollback(True)
    return ctx


@pytest.fixture
def assembled() -> Callable[..., ChatTurnContext]:
    """`assembled(doc)`: the context of a snapshot turn; the shared cache starts empty."""
    cache.clear()
    return assemble
