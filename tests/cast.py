"""The named console accounts every scoping test uses (healthchecks-style: one cast, built here once).

- **alice**: staff, moderates server A.
- **bob**: staff, moderates server B.
- **charlie**: signed in, not staff: sees no console page.
- **root**: superuser: sees everything, including the technical pages.

Each password is ``pw-<name>``. The servers are the test's own; the cast only ties alice and bob to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model

from personas.models import Server, ServerModerator


@dataclass(frozen=True)
class Cast:
    alice: Any
    bob: Any
    charlie: Any
    root: Any

    def accounts(self) -> dict[str, Any]:
        return {"alice": self.alice, "bob": self.bob, "charlie": self.charlie, "root": self.root}


def password(name: str) -> str:
    return f"pw-{name}"


def cast(server_a: Server, server_b: Server) -> Cast:
    """The four accounts, alice moderating ``server_a`` and bob ``server_b``."""
    users = get_user_model().objects
    alice = users.create_user("alice", password=password("alice"), is_staff=True)
    bob = users.create_user("bob", password=password("bob"), is_staff=True)
    charlie = users.create_user("charlie", password=password("charlie"))
    root = users.create_superuser("root", password=password("root"))
    ServerModerator.objects.create(server=server_a, user=alice)
    ServerModerator.objects.create(server=server_b, user=bob)
    return Cast(alice=alice, bob=bob, charlie=charlie, root=root)
