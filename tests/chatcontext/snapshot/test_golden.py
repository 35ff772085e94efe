"""Golden turn snapshots: every `cases/*.snapshot.json` and every example of `examples/` assembles to
its checked-in `*.expected.json`, byte for byte (turn-snapshot.md §3). See README.md for how to
review and, deliberately, regenerate them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatcontext.core.config import StageConfig
from chatcontext.core.serialize import dumps_output, turn_output
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import load_snapshot_json, validate_snapshot
from chatcontext.snapshot.minimise import minimise_snapshot
from tests.paths import EXAMPLES

CASES_DIR = Path(__file__).resolve().parent / "cases"
CASES = sorted(CASES_DIR.glob("*.snapshot.json")) + sorted(EXAMPLES.glob("*.snapshot.json"))


def expected_path(snapshot: Path) -> Path:
    return snapshot.with_name(snapshot.name.removesuffix(".snapshot.json") + ".expected.json")


def assemble(snapshot: Path) -> bytes:
    doc = load_snapshot_json(snapshot.read_bytes())
    # Defaults, not the environment: a tunable set on the test machine must not change a golden file.
    return dumps_output(turn_output(replay_snapshot(doc, config=StageConfig()))).encode("utf-8")


@pytest.mark.django_db(databases=["default", "replay"])
@pytest.mark.parametrize("snapshot", CASES, ids=lambda p: p.name.removesuffix(".snapshot.json"))
def test_golden_snapshot_assembles_to_its_expected_output(snapshot: Path) -> None:
    actual = assemble(snapshot)
    target = expected_path(snapshot)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        target.write_bytes(actual)
    assert target.exists(), f"{target.name} is missing: review the output and regenerate with UPDATE_GOLDEN=1"
    assert actual == target.read_bytes()


@pytest.mark.django_db(databases=["default", "replay"])
@pytest.mark.parametrize("snapshot", CASES, ids=lambda p: p.name.removesuffix(".snapshot.json"))
def test_a_minimised_golden_snapshot_assembles_to_the_same_bytes(snapshot: Path) -> None:
    """What a stored snapshot leaves out (chatcontext.snapshot.minimise) changes no byte of any case's output,
    and minimising twice changes nothing more."""
    doc = load_snapshot_json(snapshot.read_bytes())
    minimised = validate_snapshot(minimise_snapshot(doc))
    assert minimise_snapshot(minimised) == minimised
    output = dumps_output(turn_output(replay_snapshot(minimised, config=StageConfig()))).encode("utf-8")
    assert output == expected_path(snapshot).read_bytes()


def test_every_expected_file_has_its_snapshot() -> None:
    orphans = [
        p.name
        for folder in (CASES_DIR, EXAMPLES)
        for p in folder.glob("*.expected.json")
        if not p.with_name(p.name.replace(".expected", ".snapshot")).exists()
    ]
    assert CASES and not orphans


@pytest.mark.django_db(databases=["default", "replay"])
def test_assembly_is_byte_identical_across_runs() -> None:
    snapshot = CASES_DIR / "s03-simplify-annotations.snapshot.json"
    assert assemble(snapshot) == assemble(snapshot)
