from __future__ import annotations

from django.db import models

# The scope of the version that every write to a user row bumps: user rows (names, privacy level,
# profile) belong to no server, so one counter stands for all of them.
USER_ROWS_SCOPE = 0


class PersonalizationVersion(models.Model):
    """A counter that every write to the rows a turn may cache bumps in the write's own transaction.

    Scope ``USER_ROWS_SCOPE`` counts writes to user rows; scope ``server_id`` counts writes to that
    server's personalization blacklist. A process that cached those rows at the versions it read
    before reading them keeps using them only while both counters are unchanged (issue 17;
    ``chatcontext.personalization``). A missing row reads as version 0.
    """

    scope = models.BigIntegerField(primary_key=True, help_text="0: user rows; otherwise a server id.")
    version = models.BigIntegerField(default=0)

    class Meta:
        db_table = "personalization_versions"

    def __str__(self) -> str:
        return f"scope {self.scope} at version {self.version}"
