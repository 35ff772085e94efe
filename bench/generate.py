"""Realistic turn snapshots for the benchmarks, from seeded randomness (turn-snapshot.md §1).

The same ``Shape`` always gives the same document: every random choice comes from a
``random.Random`` seeded with a string (string seeds are hashed with SHA-512, so the result does
not depend on ``PYTHONHASHSEED``).

A document is one busy server channel:

- ``participants`` members who may post (a few talk a lot, most a little, like a real channel);
  mixed privacy levels, saved nicknames, pronouns, time zones, appearance tags, roles, presence
  and activities; a few blacklisted or blocked users;
- ``personas`` personas (one main, the rest alters speaking through webhooks) with public and
  private attributes, appearance tags and server memories;
- ``memories_per_user`` personal memories per participant, spread over the global lineage and the
  personas' lineages, some tagged; a few reminders and persona self-tasks;
- ``messages`` messages with long-tailed lengths, replies, reactions, mentions of other
  participants and personas, names written in text, link and bot embeds, images, files, voice
  messages (with known transcripts, so no speech model runs), stickers, forwards and custom emoji.

Server-level rows (users, members, personas, memories, reminders) depend only on the seed and the
server shape, messages also on ``channel``: the documents of ``channel_snapshots`` describe
several channels of one server and share its rows, so they can be assembled concurrently against
one database (bench/throughput.py).

    .venv/bin/python bench/generate.py --messages 100 --participants 200 --memories 10 > turn.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, replace
from typing import Any

JSONDict = dict[str, Any]

FORMAT = "tomori-turn-snapshot/1"
SEED = "tomori-bench-1"
BOT_ID = "900000000000000001"
SERVER_ID = "600000000000000001"
GUILD_ROLE_BASE = 620000000000000000
EMOJI_BASE = 630000000000000000
START_MS = 1_768_467_600_000  # 2026-01-15 09:00 UTC
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

PERSONA_NAMES = ("Tomori", "Ellen", "Kuro", "Mochi", "Sable", "Iris", "Nova", "Pip")
FIRST_NAMES = (
    "mina", "jun", "rei", "kai", "sora", "yuki", "hana", "ren", "aoi", "leo", "nora", "felix", "ivy", "omar",
    "lena", "theo", "zara", "milo", "ada", "hugo", "maya", "eli", "rosa", "sam",
)  # fmt: skip
PRONOUNS = ("she/her", "he/him", "they/them", "she/they", "he/they")
GENDERS = ("woman", "man", "non-binary", "genderfluid")
APPEARANCE = (
    "red scarf", "round glasses", "short black hair", "freckles", "tall", "green hoodie", "silver earrings",
    "long braid", "denim jacket", "cat ears headband",
)  # fmt: skip
ROLES = (("Moderator", 9), ("Regular", 5), ("Artist", 4), ("Gamer", 3), ("Night Owl", 2), ("Newcomer", 1))
STATUSES = ("online", "online", "idle", "dnd", "offline")
ACTIVITIES = (("playing", "Tetris"), ("listening", "Spotify"), ("playing", "Minecraft"), ("watching", "YouTube"))
WORDS = (
    "coffee", "tea", "cake", "morning", "rain", "book", "game", "music", "cat", "walk", "train", "soup", "movie",
    "weekend", "homework", "deadline", "pizza", "garden", "concert", "beach", "library", "bike", "exam", "recipe",
    "puzzle", "raid", "stream", "sketch", "guitar", "ramen", "snow", "festival", "meeting", "bug", "deploy", "lunch",
    "i", "you", "we", "the", "a", "is", "was", "really", "maybe", "so", "and", "but", "honestly", "lol", "tonight",
)  # fmt: skip
EMOJI = ("😂", "👍", "❤️", "🎉", "😭", "🔥", "👀", "✨", "🙏", "😅")
CUSTOM_EMOJI = ("blobwave", "pepehands", "catjam", "owo")
LINK_SITES = (
    ("https://www.youtube.com/watch?v=", "YouTube", "A video everyone should see"),
    ("https://github.com/tomori/issues/", "GitHub", "Issue: crash on startup"),
    ("https://en.wikipedia.org/wiki/Topic_", "Wikipedia", "An article about an obscure topic"),
)
MEMORY_TEMPLATES = (
    "likes {w}",
    "is allergic to {w}",
    "is studying for a {w} and feels nervous about it",
    "has a cat named {name} who hates {w}",
    "prefers {w} over {w2}, and will argue about it for hours if you let them",
    "works night shifts at a {w} shop and usually logs on after midnight",
    "is learning the guitar; favourite song is about {w}",
    "once said their dream is to open a small {w} cafe by the sea with a library corner",
)


@dataclass(frozen=True)
class Shape:
    """What to generate. ``channel`` selects one channel of the same server (same rows)."""

    messages: int = 100
    participants: int = 20
    memories_per_user: int = 10
    personas: int = 3
    channel: int = 0
    seed: str = SEED
    blocks: bool = True  # a few users blocked by the main persona (so its history differs from the alters')


def user_id(n: int) -> str:
    return f"1{n:017d}"


def channel_id(channel: int) -> str:
    return f"61{channel:016d}"


def message_id(channel: int, n: int) -> str:
    return f"13{channel:03d}{n:013d}"


def persona_key(i: int) -> str:
    return PERSONA_NAMES[i].lower()


def webhook_id(i: int) -> str:
    return f"92{i:016d}"


def _rng(shape: Shape, part: str) -> random.Random:
    return random.Random(f"{shape.seed}|{part}|{shape.participants}|{shape.memories_per_user}|{shape.personas}")


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(max(1, words)))


def _word_count(rng: random.Random) -> int:
    """Chat lengths are long-tailed: mostly a few words, sometimes a paragraph."""
    return max(1, min(160, int(rng.lognormvariate(2.0, 0.9))))


@dataclass(frozen=True)
class _User:
    number: int
    name: str
    privacy: int
    nickname: str | None  # server nickname (member)
    saved_nickname: str | None  # personalization nickname (users row)

    @property
    def id(self) -> str:
        return user_id(self.number)

    @property
    def username(self) -> str:
        return f"{self.name}{self.number}"

    @property
    def global_name(self) -> str:
        return f"{self.name.capitalize()} {self.number}"

    @property
    def display_name(self) -> str:
        return self.nickname or self.global_name

    def author(self) -> JSONDict:
        return {
            "id": self.id,
            "username": self.username,
            "global_name": self.global_name,
            "display_name": self.display_name,
            "bot": False,
        }


def _users(shape: Shape) -> list[_User]:
    rng = _rng(shape, "users")
    users = []
    for n in range(1, shape.participants + 1):
        name = rng.choice(FIRST_NAMES)
        roll = rng.random()
        privacy = 0 if roll < 0.8 else 1 if roll < 0.95 else 2
        users.append(
            _User(
                number=n,
                name=name,
                privacy=privacy,
                nickname=f"{name.capitalize()}-{rng.choice(('chan', 'kun', 'san', 'bean'))}"
                if rng.random() < 0.3
                else None,
                saved_nickname=f"{name.capitalize()}{rng.choice(('y', 'ie', 'o', 'ster'))}{n}"
                if rng.random() < 0.25
                else None,
            )
        )
    # The trigger's author is a visible, personalized user.
    users[0] = replace(users[0], privacy=0)
    return users


def _personas(shape: Shape) -> list[JSONDict]:
    rng = _rng(shape, "personas")
    personas = []
    for i in range(shape.personas):
        name = PERSONA_NAMES[i]
        persona: JSONDict = {
            "key": persona_key(i),
            "persona_nickname": name,
            "is_alter": i > 0,
            "persona_lineage_id": 10000 + i,
            "trigger_words": [name.lower()],
            "persona_prompt": f"{name} is a {rng.choice(('cheerful', 'dry-witted', 'sleepy', 'curious'))} "
            f"{rng.choice(('barista', 'librarian', 'astronomer', 'gardener'))} who chats with the server. "
            + _sentence(rng, 40),
            "physical_appearance_tags": rng.sample(APPEARANCE, 3),
            "attributes": [
                {"text": f"Loves {rng.choice(WORDS)} and {rng.choice(WORDS)}", "is_public": True},
                {"text": f"Has a collection of {rng.choice(WORDS)} postcards", "is_public": True},
                {"text": f"Secretly afraid of {rng.choice(WORDS)}", "is_public": False},
            ],
        }
        if i > 0:
            persona["webhook_id"] = webhook_id(i)
        personas.append(persona)
    return personas


def _persona_author(shape: Shape, i: int) -> JSONDict:
    name = PERSONA_NAMES[i]
    if i == 0:
        return {"id": BOT_ID, "username": "tomoribot", "global_name": name, "display_name": name, "bot": True}
    return {"id": webhook_id(i), "username": name, "global_name": None, "display_name": name, "bot": True}


def _server_rows(shape: Shape, users: list[_User], now_ms: int) -> JSONDict:
    """Users, members and everything else the database holds for the server."""
    rng = _rng(shape, "rows")
    lineages = [0, *(10000 + i for i in range(shape.personas))]
    user_rows, members, memories, reminders = [], [], [], []
    for u in users:
        row: JSONDict = {
            "disc_id": u.id,
            "username": u.username,
            "global_name": u.global_name,
            "privacy_level": u.privacy,
            "user_nickname": u.saved_nickname,
        }
        if rng.random() < 0.4:
            row["pronouns"] = rng.choice(PRONOUNS)
        if rng.random() < 0.15:
            row["gender_identity"] = rng.choice(GENDERS)
        if rng.random() < 0.5:
            row["timezone_offset"] = rng.randint(-8, 10)
        if rng.random() < 0.3:
            row["physical_appearance_tags"] = rng.sample(APPEARANCE, rng.randint(1, 3))
        user_rows.append(row)
        member: JSONDict = {
            "user_disc_id": u.id,
            "username": u.username,
            "global_name": u.global_name,
            "nickname": u.nickname,
            "roles": [
                {"id": str(GUILD_ROLE_BASE + k), "name": name, "position": pos}
                for k, (name, pos) in enumerate(ROLES)
                if rng.random() < 0.25
            ],
            "presence_status": rng.choice(STATUSES),
        }
        if rng.random() < 0.2:
            kind, name = rng.choice(ACTIVITIES)
            member["activities"] = [
                {"type": kind, "name": name, "started_at_ms": now_ms - rng.randint(1, 180) * 60_000}
            ]
        members.append(member)
        for k in range(shape.memories_per_user):
            template = rng.choice(MEMORY_TEMPLATES)
            memory: JSONDict = {
                "user_disc_id": u.id,
                "persona_lineage_id": rng.choice(lineages),
                "content": f"{u.global_name} "
                + template.format(w=rng.choice(WORDS), w2=rng.choice(WORDS), name=rng.choice(FIRST_NAMES).capitalize()),
                "created_at_ms": now_ms - rng.randint(1, 365) * DAY_MS - k,
            }
            if rng.random() < 0.2:
                memory["tags"] = rng.sample(WORDS[:36], 2)
            memories.append(memory)
        if rng.random() < 0.1:
            reminders.append(
                {
                    "user_disc_id": u.id,
                    "persona_key": persona_key(rng.randrange(shape.personas)),
                    "purpose": f"remind {u.global_name} about the {rng.choice(WORDS)}",
                    "due_at_ms": now_ms + rng.randint(1, 72) * HOUR_MS,
                    "repetition_interval_hours": rng.choice((None, None, 24, 168)),
                }
            )
    members.append({"user_disc_id": BOT_ID, "username": "tomoribot", "global_name": "Tomori", "is_bot": True})
    for i in range(shape.personas):
        reminders.append(
            {
                "user_disc_id": BOT_ID,
                "persona_key": persona_key(i),
                "purpose": f"ask the channel about the {rng.choice(WORDS)} plans",
                "due_at_ms": now_ms + rng.randint(2, 48) * HOUR_MS,
                "self_reminder": True,
            }
        )
    others = users[1:]
    return {
        "users": user_rows,
        "members": members,
        "personal_memories": memories,
        "server_memories": [
            {
                "persona_lineage_id": rng.choice(lineages),
                "content": f"The server {rng.choice(('runs', 'hosts', 'plans'))} a {rng.choice(WORDS)} night "
                f"every {rng.choice(('Friday', 'Sunday', 'month'))}",
                "created_at_ms": now_ms - rng.randint(1, 90) * DAY_MS,
            }
            for _ in range(3 * shape.personas)
        ],
        "reminders": reminders,
        "blacklist": [{"user_disc_id": u.id} for u in others if rng.random() < 0.03],
        "persona_user_blocks": [
            {"persona_key": persona_key(0), "user_disc_id": u.id, "expires_at_ms": now_ms + 6 * HOUR_MS}
            for u in others
            if shape.blocks and rng.random() < 0.02
        ],
    }


def _mention(u: _User) -> str:
    return f"<@{u.id}>"


def _content(rng: random.Random, shape: Shape, users: list[_User], author: _User | None) -> str:
    words = _sentence(rng, _word_count(rng)).split(" ")
    roll = rng.random()
    others = [u for u in rng.sample(users, min(3, len(users))) if u is not author]
    if roll < 0.2 and others:
        words.insert(rng.randrange(len(words) + 1), " ".join(_mention(u) for u in others[: rng.randint(1, 3)]))
    elif roll < 0.3 and others:
        # A name written in text: what alias discovery looks for (D-20).
        u = others[0]
        words.insert(rng.randrange(len(words) + 1), rng.choice((u.global_name, u.nickname or u.username)))
    elif roll < 0.37:
        words.insert(0, PERSONA_NAMES[rng.randrange(shape.personas)].lower() + ",")
    if rng.random() < 0.15:
        words.append(rng.choice(EMOJI))
    if rng.random() < 0.05:
        words.append(f"<:{rng.choice(CUSTOM_EMOJI)}:{EMOJI_BASE + rng.randint(1, 40)}>")
    if rng.random() < 0.02:
        words.append("```py\nprint('hello from the bench')\n```")
    return " ".join(words)


def _attachment(rng: random.Random, channel: str, number: int, kind: str) -> JSONDict:
    attachment_id = f"7{number:017d}"
    name, content_type = {
        "image": (f"photo{number}.png", "image/png"),
        "file": (f"notes{number}.pdf", "application/pdf"),
        "voice": ("voice-message.ogg", "audio/ogg"),
    }[kind]
    return {
        "id": attachment_id,
        "name": name,
        "url": f"https://cdn.discordapp.com/attachments/{channel}/{attachment_id}/{name}",
        "proxy_url": f"https://media.discordapp.net/attachments/{channel}/{attachment_id}/{name}",
        "content_type": content_type,
        "size": rng.randint(20_000, 4_000_000),
    }


def _link(rng: random.Random, number: int) -> tuple[str, JSONDict]:
    base, site, title = rng.choice(LINK_SITES)
    url = f"{base}{number}"
    return url, {
        "title": f"{title} #{number}",
        "description": _sentence(rng, rng.randint(8, 30)),
        "url": url,
        "author_name": site,
        "thumbnail": {"url": f"https://images.example.com/thumb/{number}.jpg"},
    }


def _bot_embed(rng: random.Random) -> JSONDict:
    return {
        "title": rng.choice(("Daily quiz", "Leaderboard", "Server stats")),
        "description": _sentence(rng, rng.randint(5, 20)),
        "color": 0x5865F2,
        "footer_text": "quizbot",
        "fields": [{"name": f"#{k + 1}", "value": _sentence(rng, 3)} for k in range(rng.randint(1, 4))],
    }


def _messages(shape: Shape, users: list[_User], now_ms: int) -> tuple[list[JSONDict], list[JSONDict]]:
    """Messages oldest first, and the transcripts of their voice messages."""
    rng = random.Random(f"{shape.seed}|messages|{shape.channel}|{shape.messages}|{shape.participants}")
    channel = channel_id(shape.channel)
    # Zipf-like activity: a handful of regulars write most messages; newcomers appear first in order.
    weights = [1 / (rank + 1) ** 0.8 for rank in range(len(users))]
    quiz_bot = {"id": "910000000000000001", "username": "quizbot", "global_name": "QuizBot", "bot": True}
    clock = now_ms - 5_000 - shape.messages * 90_000
    messages: list[JSONDict] = []
    transcripts: list[JSONDict] = []
    for n in range(1, shape.messages + 1):
        clock += rng.randint(5, 170) * 1000
        roll = rng.random()
        author_user: _User | None = None
        if roll < 0.12:
            author = _persona_author(shape, rng.randrange(shape.personas))
        elif roll < 0.14:
            author = quiz_bot
        else:
            author_user = users[n - 1] if n <= len(users) and rng.random() < 0.5 else rng.choices(users, weights)[0]
            author = author_user.author()
        number = shape.channel * 100_000 + n
        msg: JSONDict = {
            "id": message_id(shape.channel, n),
            "channel_id": channel,
            "guild_id": SERVER_ID,
            "author": author,
            "created_timestamp": clock,
            "content": _content(rng, shape, users, author_user),
        }
        if author["id"].startswith("92"):
            msg["webhook_id"] = author["id"]
        if author is quiz_bot:
            msg["content"] = ""
            msg["embeds"] = [_bot_embed(rng)]
        elif rng.random() < 0.08:
            url, embed = _link(rng, number)
            msg["content"] += f" {url}"
            msg["embeds"] = [embed]
        if n > 1 and rng.random() < 0.2:
            target = rng.randint(max(1, n - 30), n - 1)
            msg["reference"] = {
                "type": "default",
                "message_id": message_id(shape.channel, target),
                "channel_id": channel,
            }
        elif n > 1 and rng.random() < 0.01:
            source = rng.randint(1, n - 1)
            msg["reference"] = {"type": "forward", "message_id": message_id(shape.channel, source)}
            msg["content"] = ""
            msg["message_snapshots"] = [{"content": _sentence(rng, 12), "channel_id": channel}]
        if author_user is not None:
            roll = rng.random()
            if roll < 0.08:
                msg["attachments"] = [_attachment(rng, channel, number, "image")]
            elif roll < 0.10:
                msg["attachments"] = [_attachment(rng, channel, number, "file")]
            elif roll < 0.12:
                voice = _attachment(rng, channel, number, "voice")
                msg["attachments"] = [voice]
                msg["content"] = ""
                transcripts.append({"attachment_id": voice["id"], "text": _sentence(rng, rng.randint(10, 40))})
            elif roll < 0.13:
                msg["stickers"] = [{"id": f"64{number:016d}", "name": "wave"}]
        if rng.random() < 0.15:
            reactions = []
            for emoji in rng.sample(EMOJI, rng.randint(1, 3)):
                reactors = [u.id for u in rng.sample(users, min(len(users), rng.randint(1, 4)))]
                reactions.append({"emoji": {"id": None, "name": emoji}, "count": len(reactors), "users": reactors})
            msg["reactions"] = reactions
        msg["clean_content"] = msg["content"]
        messages.append(msg)
    trigger = messages[-1]
    trigger["author"] = users[0].author()
    for key in ("webhook_id", "embeds", "attachments", "stickers", "message_snapshots"):
        trigger.pop(key, None)
    if trigger.get("reference", {}).get("type") == "forward":
        del trigger["reference"]
    trigger["content"] = trigger["clean_content"] = f"{PERSONA_NAMES[0].lower()}, what do you all think? " + (
        _sentence(rng, 8)
    )
    return messages, transcripts


def generate_snapshot(shape: Shape) -> JSONDict:
    """One valid `tomori-turn-snapshot/1` document for ``shape``; the main persona answers the last
    message. Deterministic for a given shape."""
    if shape.participants < 1 or shape.personas < 1 or shape.personas > len(PERSONA_NAMES):
        raise ValueError("a shape needs at least one participant and 1-8 personas")
    now_ms = START_MS + 12 * HOUR_MS
    users = _users(shape)
    messages, transcripts = _messages(shape, users, now_ms)
    return {
        "format": FORMAT,
        "now_ms": now_ms,
        "bot_user": {"id": BOT_ID, "username": "tomoribot", "global_name": "Tomori"},
        "server": {
            "disc_id": SERVER_ID,
            "name": "Bench Lounge",
            "description": "A busy community server for the Tomori benchmarks",
            "settings": {"message_fetch_limit": 100, "timezone_offset": 9},
        },
        "channel": {"id": channel_id(shape.channel), "name": f"general-{shape.channel}", "topic": "Anything goes"},
        "personas": _personas(shape),
        **_server_rows(shape, users, now_ms),
        "voice_transcripts": transcripts,
        "messages": messages,
        "turn": {"persona_key": persona_key(0), "trigger_message_id": messages[-1]["id"]},
    }


def channel_snapshots(shape: Shape, channels: int) -> list[JSONDict]:
    """``channels`` documents of one server: identical rows, each with its own channel and messages."""
    return [generate_snapshot(replace(shape, channel=c)) for c in range(channels)]


def with_responders(doc: JSONDict, personas: int) -> JSONDict:
    """The same turn answered by the first ``personas`` personas (main first, alters co-responding)."""
    keys = [p["key"] for p in doc["personas"][:personas]]
    return {**doc, "turn": {**doc["turn"], "co_responder_keys": keys[1:]}}


def main() -> None:
    parser = argparse.ArgumentParser(description="Print one generated turn snapshot (JSON).")
    parser.add_argument("--messages", type=int, default=Shape.messages)
    parser.add_argument("--participants", type=int, default=Shape.participants)
    parser.add_argument("--memories", type=int, default=Shape.memories_per_user)
    parser.add_argument("--personas", type=int, default=Shape.personas)
    parser.add_argument("--channel", type=int, default=0)
    parser.add_argument("--seed", default=SEED)
    args = parser.parse_args()
    shape = Shape(args.messages, args.participants, args.memories, args.personas, args.channel, args.seed)
    json.dump(generate_snapshot(shape), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
