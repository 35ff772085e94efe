"""What a community does across its personas' data and what its personas were told: the use cases
that span ``personas`` (memories, users, servers) and ``chatcontext`` (prompt records, voice
transcripts) — forget-me, the user export, retention, the server list's usage figures — with the
admin pages, API endpoints and tasks that run them.

A layer of its own between ``bot`` and ``chatcontext`` (the import contract in pyproject.toml): it
imports both, so neither has to reach up to the other and nothing is wired at start-up.
"""
