"""The admin's home page by task rather than by app (issue 32): the models a moderator reaches for
together sit together, with entry points for the two things done most (find a user, recent turns)."""

from __future__ import annotations

from typing import Any

# Task → the models (app label, model name) under it, in the order shown. A model not listed lands in
# the last group, so a new admin is never hidden.
TASKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "People",
        (
            "personas.discorduser",
            "personas.servermember",
            "personas.personalizationblacklist",
            "personas.personauserblock",
            "personas.userpersonanamingpreference",
        ),
    ),
    (
        "Personas and memories",
        (
            "personas.persona",
            "personas.personalmemory",
            "personas.servermemory",
            "personas.reminder",
            "personas.deletedpersonalmemory",
            "personas.deletedservermemory",
            "personas.personalineage",
            "personas.serveremoji",
            "personas.serversticker",
        ),
    ),
    ("Turns", ("chatcontext.promptrecord", "chatcontext.voicetranscript", "personas.statcounter")),
)
OTHERS = "Settings and access"


def task_groups(app_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The admin's app list regrouped by task: ``[{"name", "models"}]``, empty groups left out. Each model
    keeps the dict the admin built (its name, URLs and permissions), so nothing the reader may not
    open appears."""
    models = {f"{app['app_label']}.{m['object_name'].lower()}": m for app in app_list for m in app["models"]}
    groups = []
    placed: set[str] = set()
    for name, keys in TASKS:
        found = [models[key] for key in keys if key in models]
        placed.update(keys)
        groups.append({"name": name, "models": found})
    groups.append({"name": OTHERS, "models": [m for key, m in models.items() if key not in placed]})
    return [group for group in groups if group["models"]]


def entry_points(app_list: list[dict[str, Any]]) -> dict[str, str]:
    """The changelist URLs behind "Find a user" and "Recent turns", when the reader may open them."""
    urls = {
        f"{app['app_label']}.{m['object_name'].lower()}": m.get("admin_url") for app in app_list for m in app["models"]
    }
    wanted = {"users": "personas.discorduser", "turns": "chatcontext.promptrecord"}
    return {name: url for name, key in wanted.items() if (url := urls.get(key))}
