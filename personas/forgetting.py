"""How forget-me and retention reach the prompt records and voice transcripts kept above personas.

personas owns the rules: who is forgotten (``actions.forget_user``) and how long each server keeps
its prompt records (``retention``). The records and transcripts are chatcontext's tables, and
personas, the lowest layer, imports nothing above it; so chatcontext registers its store here from
its AppConfig.ready and both rules call through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class ForgottenRecords:
    prompt_records: int = 0
    voice_transcripts: int = 0


class PromptRecordStore(Protocol):
    def forget(self, user_disc_id: str) -> ForgottenRecords:
        """Delete, inside ``forget_user``'s transaction, every prompt record about the user and the
        voice transcripts of the messages those records show they authored."""

    def prune_batch(self, server_ids: list[int], before: datetime, limit: int) -> int:
        """Delete up to ``limit`` records of these servers created before ``before``; how many went."""


_store: PromptRecordStore | None = None


def register_prompt_record_store(store: PromptRecordStore) -> None:
    global _store
    _store = store


def prompt_record_store() -> PromptRecordStore:
    # No silent fallback: forgetting someone while nothing deletes their records would report success.
    if _store is None:
        raise RuntimeError("no prompt-record store is registered (chatcontext registers one when it is ready)")
    return _store


@dataclass(frozen=True)
class RecordsAbout:
    """The prompt records about one user, deleted by forget-me (its preview counts them by rolling back)."""

    user_disc_id: str

    def delete(self) -> ForgottenRecords:
        return prompt_record_store().forget(self.user_disc_id)
