"""What a command made of a turn, on its prompt record (issue 30 items 4–6).

A turn a slash command or a button caused (``/impersonate``, ``/scene``, Regenerate) is recorded like
any other (``chatcontext.records.store``), with a ``TurnCommand``: what the command did, which the
inspector shows. The member who asked is a subject of the record (their words are in it, so their
forget-me deletes it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from chatcontext.records.models import PromptRecord


@dataclass(frozen=True)
class TurnCommand:
    """``name``: ``impersonate``, ``scene`` or ``regenerate``; ``by``: the Discord id (the playground:
    the member id the staff account posts as) of who asked; ``summary``: what it did, in words.
    ``replaces_record``: for a regenerated reply, the record of the version it replaced."""

    name: str
    by: str
    summary: str
    replaces_record: int | None = None

    def as_json(self) -> dict[str, object]:
        return {key: value for key, value in asdict(self).items() if value is not None}


def versions_of(record: PromptRecord) -> list[PromptRecord]:
    """Every version of the reply ``record`` belongs to, oldest first: the first reply, then each
    regeneration that replaced the one before."""
    first = record
    seen = {record.pk}
    while (replaced := first.command.get("replaces_record")) is not None and replaced not in seen:
        earlier = PromptRecord.objects.filter(pk=replaced).first()
        if earlier is None:
            break
        first, seen = earlier, seen | {earlier.pk}
    chain = [first]
    while True:
        later = PromptRecord.objects.filter(command__replaces_record=chain[-1].pk).order_by("id").first()
        if later is None or later.pk in {r.pk for r in chain}:
            return chain
        chain.append(later)
