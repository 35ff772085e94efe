"""Value builders for the build-context.md §12 fixture world used by the builder and tail tests.

Personas Tomori (id 1, lineage 10, main) and Ellen (id 2, alter); bot user `900`; humans U1 (`Ann`)
and U2 (`Bob`); timezone offset 0, time awareness on, defaults from §0.1.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from chatcontext.core.builder import BuilderInputs
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.types import (
    Attachment,
    Author,
    ChatIncoming,
    ChatTurn,
    ContextItem,
    ContextItemTag,
    DiscordMessage,
    ImageRef,
    LockedTurn,
    PersonaAttributeInfo,
    PersonaInfo,
    ServerConfig,
    SimplifiedMessage,
    TextPart,
    TriggererName,
    UserRow,
    VideoRef,
)

BOT = "900"
U1 = "111111111111111111"
U2 = "222222222222222222"
CHANNEL = "333333333333333333"
NOW_MS = 1_779_355_800_000  # 2026-05-21T09:30:00Z
BOT_AUTHOR = Author(id=BOT, username="tomori-bot", bot=True)
ANN = Author(id=U1, username="ann01", global_name="Ann")
BOB = Author(id=U2, username="bob01", global_name="Bob")


def tomori(**changes: Any) -> PersonaInfo:
    base = PersonaInfo(
        persona_id=1,
        persona_nickname="Tomori",
        persona_lineage_id=10,
        server_id=1,
        trigger_words=("tomori",),
        persona_prompt="Tomori is a calm night-shift librarian.",
        attributes=(
            PersonaAttributeInfo("Loves old detective novels", is_public=True),
            PersonaAttributeInfo("Secretly afraid of thunder", is_public=False),
        ),
        physical_appearance_tags=("short hair", "glasses"),
    )
    return replace(base, **changes)


def ellen(**changes: Any) -> PersonaInfo:
    base = PersonaInfo(
        persona_id=2,
        persona_nickname="Ellen",
        persona_lineage_id=11,
        is_alter=True,
        server_id=1,
        trigger_words=("ellen",),
        persona_prompt="Ellen is a shy painter.",
        attributes=(PersonaAttributeInfo("Hides sketches", is_public=False),),
    )
    return replace(base, **changes)


def cafe(**changes: Any) -> ServerConfig:
    return replace(ServerConfig(server_id=1, server_disc_id="500000000000000001", name="Cafe"), **changes)


def message(
    message_id: str = "700000000000000001", author: Author = ANN, content: str = "hello", **changes: Any
) -> DiscordMessage:
    base = DiscordMessage(id=message_id, channel_id=CHANNEL, author=author, created_timestamp=NOW_MS, content=content)
    return replace(base, clean_content=changes.pop("clean_content", content), **changes)


def png(name: str = "a.png", attachment_id: str = "1") -> Attachment:
    return Attachment(attachment_id, name, f"https://cdn.example/{name}", f"https://proxy.example/{name}", "image/png")


def turn(
    incoming: ChatIncoming | None = None,
    *,
    persona: PersonaInfo | None = None,
    triggerer_name: str = "Ann",
    **changes: Any,
) -> ChatTurn:
    persona = persona or tomori()
    incoming = incoming or ChatIncoming(message=message())
    base = ChatTurn(
        locked_turn=LockedTurn(incoming=incoming, channel_id=CHANNEL),
        persona=persona,
        all_personas=(tomori(), ellen()),
        server=cafe(),
        channel_name="general",
        bot_user=BOT_AUTHOR,
        now_ms=NOW_MS,
        user_row=UserRow(user_id=41, user_disc_id=U1, username="ann01"),
        main_persona=tomori(),
        triggerer=TriggererName(triggerer_name, "User"),
    )
    return replace(base, **changes)


def entry(
    entry_id: str,
    author_id: str = U1,
    author_name: str = "Ann",
    content: str | None = "hi",
    author_type: Literal["user", "persona"] = "user",
    **changes: Any,
) -> SimplifiedMessage:
    if author_type == "persona":
        changes.setdefault("persona_name", author_name)
    return SimplifiedMessage(
        id=entry_id, author_id=author_id, author_name=author_name, author_type=author_type, content=content, **changes
    )


def tomori_entry(entry_id: str, content: str = "hello there") -> SimplifiedMessage:
    return entry(
        entry_id, BOT, "Tomori", content, "persona", author_persona_id=1, author_persona_lineage_id=10, created_at=0
    )


def image(name: str, source: str | None = None, *, sticker: bool = False, emoji: bool = False) -> ImageRef:
    if sticker:
        url = f"https://cdn.discordapp.com/stickers/{name}.png"
        return ImageRef(url, url, "image/png", f"{name}.png", source_message_id=source)
    return ImageRef(
        f"https://cdn.example/{name}",
        f"https://proxy.example/{name}",
        "image/png",
        name,
        is_emoji=emoji,
        source_message_id=source,
    )


def video(name: str, *, youtube: bool = False) -> VideoRef:
    if youtube:
        url = f"https://youtu.be/{name}"
        return VideoRef(url, url, "video/youtube", f"youtube_video_{name}.mp4", is_youtube_link=True)
    return VideoRef(f"https://cdn.example/{name}", f"https://proxy.example/{name}", "video/mp4", name)


def dialogue(role: Literal["user", "model"], text: str) -> ContextItem:
    return ContextItem(role=role, parts=[TextPart(text)], metadata_tag=ContextItemTag.DIALOGUE_HISTORY)


def inputs(history: list[SimplifiedMessage] | None = None, **changes: Any) -> BuilderInputs:
    changes.setdefault("message_id_map", MessageIdMap())
    return BuilderInputs(
        persona=changes.pop("persona", tomori()),
        server=changes.pop("server", cafe()),
        channel_name=changes.pop("channel_name", "general"),
        history=history if history is not None else [entry("m1")],
        all_personas=changes.pop("all_personas", (tomori(), ellen())),
        **changes,
    )


def texts(items: list[ContextItem]) -> list[str]:
    return [item.text for item in items]
