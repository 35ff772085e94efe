"""Hand-built turn snapshots for the pipeline tests: valid `tomori-turn-snapshot/1` documents, and a
small busy channel from a seeded ``random.Random`` (the same seed always gives the same document)
in which every participant posts, which the query-count pins rely on (bench/generate.py's realistic
channels leave most members quiet).

Ids are 18-digit snowflakes derived from small numbers (user 7 → `100000000000000007`), texts are
plain words plus one marker token per message (`w{message_number}x`) that tests can search for.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from chatcontext.snapshot import FORMAT

JSONDict = dict[str, Any]

BOT_ID = "900000000000000001"
SERVER_ID = "500000000000000001"
CHANNEL_ID = "510000000000000001"
WEBHOOK_ID = "920000000000000001"
START_MS = 1_768_467_600_000  # 2026-01-15 09:00 UTC
MINUTE_MS = 60_000
WORDS = ("coffee", "tea", "cake", "morning", "rain", "book", "game", "music", "cat", "walk", "train", "soup")


def user_id(n: int) -> str:
    return f"1{n:017d}"


def message_id(n: int) -> str:
    return f"13{n:016d}"


def marker(n: int) -> str:
    """The unique token carried by message number ``n``."""
    return f"w{n}x"


@dataclass(frozen=True)
class SyntheticUser:
    number: int
    privacy_level: int = 0
    blocked: bool = False
    blacklisted: bool = False

    @property
    def id(self) -> str:
        return user_id(self.number)

    @property
    def username(self) -> str:
        return f"user{self.number}"


def author_json(user: SyntheticUser) -> JSONDict:
    name = f"User {user.number}"
    return {"id": user.id, "username": user.username, "global_name": name, "display_name": name, "bot": False}


BOT_AUTHOR: JSONDict = {
    "id": BOT_ID,
    "username": "tomoribot",
    "global_name": "Tomori",
    "display_name": "Tomori",
    "bot": True,
}
PERSONA_HOOK_AUTHOR: JSONDict = {
    "id": WEBHOOK_ID,
    "username": "Ellen",
    "global_name": None,
    "display_name": "Ellen",
    "bot": True,
}


def message_json(
    number: int,
    author: JSONDict,
    content: str,
    *,
    created_ms: int,
    reply_to: int | None = None,
    image: bool = False,
    reactions: list[JSONDict] | None = None,
) -> JSONDict:
    msg: JSONDict = {
        "id": message_id(number),
        "channel_id": CHANNEL_ID,
        "guild_id": SERVER_ID,
        "author": author,
        "content": content,
        "clean_content": content,
        "created_timestamp": created_ms,
    }
    if author["id"] == WEBHOOK_ID:
        msg["webhook_id"] = WEBHOOK_ID
    if reply_to is not None:
        msg["reference"] = {"type": "default", "message_id": message_id(reply_to), "channel_id": CHANNEL_ID}
    if image:
        attachment = f"7{number:017d}"
        msg["attachments"] = [
            {
                "id": attachment,
                "name": f"photo{number}.png",
                "url": f"https://cdn.discordapp.com/attachments/{CHANNEL_ID}/{attachment}/photo{number}.png",
                "proxy_url": f"https://media.discordapp.net/attachments/{CHANNEL_ID}/{attachment}/photo{number}.png",
                "content_type": "image/png",
                "size": 1000,
            }
        ]
    if reactions:
        msg["reactions"] = reactions
    return msg


def base_document(users: list[SyntheticUser], messages: list[JSONDict], *, now_ms: int, **turn: Any) -> JSONDict:
    """A server `Bench` with Tomori (main) and Ellen (alter, webhook), the users as members, their
    privacy levels, blocks and blacklist entries; the turn answers the last message by default."""
    return {
        "format": FORMAT,
        "now_ms": now_ms,
        "bot_user": {"id": BOT_ID, "username": "tomoribot", "global_name": "Tomori"},
        "server": {"disc_id": SERVER_ID, "name": "Bench", "settings": {"message_fetch_limit": 100}},
        "channel": {"id": CHANNEL_ID, "name": "general"},
        "personas": [
            {
                "key": "tomori",
                "persona_nickname": "Tomori",
                "is_alter": False,
                "persona_lineage_id": 10000,
                "trigger_words": ["tomori"],
                "persona_prompt": "Tomori is a cheerful barista.",
            },
            {
                "key": "ellen",
                "persona_nickname": "Ellen",
                "is_alter": True,
                "persona_lineage_id": 10001,
                "trigger_words": ["ellen"],
                "webhook_id": WEBHOOK_ID,
            },
        ],
        "users": [
            {
                "disc_id": u.id,
                "username": u.username,
                "global_name": f"User {u.number}",
                "privacy_level": u.privacy_level,
            }
            for u in users
        ],
        "members": [
            *(
                {
                    "user_disc_id": u.id,
                    "username": u.username,
                    "global_name": f"User {u.number}",
                    "presence_status": "online",
                }
                for u in users
            ),
            {"user_disc_id": BOT_ID, "username": "tomoribot", "global_name": "Tomori", "is_bot": True},
        ],
        "blacklist": [{"user_disc_id": u.id} for u in users if u.blacklisted],
        "persona_user_blocks": [
            {"persona_key": "tomori", "user_disc_id": u.id, "expires_at_ms": now_ms + 90 * MINUTE_MS}
            for u in users
            if u.blocked
        ],
        "messages": messages,
        "turn": {"persona_key": "tomori", "trigger_message_id": messages[-1]["id"], **turn},
    }


def generate_snapshot(
    rng: random.Random,
    *,
    messages: int,
    participants: int,
    memories_per_user: int = 0,
    reminders_per_user: int = 0,
) -> JSONDict:
    """A busy channel: ``participants`` users (each posts at least once when there are enough
    messages, and is otherwise mentioned by id), replies, reactions, images and bot/persona
    messages at fixed rates; personal memories and reminders per user. Deterministic for a given
    ``rng`` state."""
    users = [SyntheticUser(n + 1) for n in range(participants)]
    docs: list[JSONDict] = []
    for n in range(1, messages + 1):
        roll = rng.random()
        if roll < 0.1:
            author = BOT_AUTHOR
        elif roll < 0.15:
            author = PERSONA_HOOK_AUTHOR
        else:
            author = author_json(users[(n - 1) % participants] if n <= participants else rng.choice(users))
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        if participants > messages:  # more people than messages: the rest are mentioned by id
            words += f" <@{users[(messages + n - 1) % participants].id}>"
        reactor = rng.choice(users).id
        docs.append(
            message_json(
                n,
                author,
                f"{words} {marker(n)}",
                created_ms=START_MS + n * MINUTE_MS,
                reply_to=rng.randint(1, n - 1) if n > 1 and rng.random() < 0.15 else None,
                image=rng.random() < 0.1,
                reactions=[{"emoji": {"id": None, "name": "👍"}, "count": 1, "users": [reactor]}]
                if rng.random() < 0.1
                else None,
            )
        )
    # Every kind of row and read appears at least once, so documents of any size exercise the same
    # loaders: a persona webhook message, a bot message, a reply, an image, a reaction by the bot.
    if messages >= 4:

        def redo(n: int, author: JSONDict, **extra: Any) -> None:
            old = docs[n - 1]
            docs[n - 1] = message_json(n, author, old["content"], created_ms=old["created_timestamp"], **extra)

        bot_reaction = {"emoji": {"id": None, "name": "👍"}, "count": 1, "users": [BOT_ID]}
        redo(2, PERSONA_HOOK_AUTHOR)
        redo(3, BOT_AUTHOR)
        redo(4, author_json(users[0]), reply_to=1, image=True, reactions=[bot_reaction])
    docs[-1]["author"] = author_json(users[0])
    docs[-1]["content"] = f"tomori, what do you think? {marker(messages)}"
    docs[-1]["clean_content"] = docs[-1]["content"]
    now_ms = START_MS + (messages + 10) * MINUTE_MS
    doc = base_document(users, docs, now_ms=now_ms)
    doc["personal_memories"] = [
        {
            "user_disc_id": u.id,
            "persona_lineage_id": rng.choice((0, 10000, 10001)),
            "content": f"{u.username} likes {rng.choice(WORDS)} ({k})",
            "created_at_ms": START_MS - (k + 1) * 3_600_000,
        }
        for u in users
        for k in range(memories_per_user)
    ]
    doc["reminders"] = [
        {
            "user_disc_id": u.id,
            "persona_key": "tomori",
            "purpose": f"bring {rng.choice(WORDS)} for {u.username}",
            "due_at_ms": now_ms + (k + 1) * 3_600_000,
        }
        for u in users
        for k in range(reminders_per_user)
    ]
    return doc
