"""System notices over both transports: embeds and Components V2 (build-context.md §6, BC2-04/06).

Tomori confirms her own tool actions (a memory learned, a reminder set, a summary compacted …) with a
notice message. The LLM must see those notices as `[System: …]` lines, or she re-runs the tools. This
module holds the title catalog (data), the classifier, the Components-V2 reader and the formatting
shared by both transports, so an embed and a CV2 container with the same title and description
produce byte-identical text (BC6-06).

Who may produce a notice is decided by the caller (`chatcontext.core.simplify.embeds`): only the bot user
and persona webhooks; a user-authored look-alike is never a notice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chatcontext.core.frames import inert, system_frame
from chatcontext.core.types import Embed

# BC6-01
TARGET_KINDS = frozenset(
    {
        "memory_learning",
        "reset",
        "reminder_set",
        "system_injection",
        "scene_directive",
        "compact_summary",
        "compact_refresh",
        "reward",
        "punish",
        "user_info_update",
        "user_moderation",
    }
)
PROTOCOL_KINDS = TARGET_KINDS | {"diagnostic", "reply_context"}
MARKER_KINDS = frozenset({"reset", "compact_refresh"})

ERROR_COLOR = 0xE74C3C

# BC6-02: the en-US notice titles, key → title. `{placeholder}` makes a title a template; a key
# ending in `_prefix` is matched with `startswith`. The reference's other locales are not shipped yet;
# a new locale is one more entry in CATALOG and is scanned the same way.
EN_US: dict[str, str] = {
    "genai.self_teach.server_memory_learned_title": "📝 {persona_nickname} Learned Something!",
    "genai.self_teach.server_memory_updated_title": "✏️ {persona_nickname} Updated a Memory!",
    "genai.self_teach.server_memory_deleted_title": "🗑️ {persona_nickname} Deleted a Memory!",
    "genai.self_teach.personal_memory_learned_title": "📝 {persona_nickname} Learned Something About {user_name}!",
    "genai.self_teach.personal_memory_updated_title": "✏️ {persona_nickname} Updated a Memory About {user_name}!",
    "genai.self_teach.personal_memory_deleted_title": "🗑️ {persona_nickname} Deleted a Memory About {user_name}!",
    "tools.user_info_update.success_title": "👤 Updated {user_name}'s Info",
    "tools.user_block.block_mute_title": "🔇 {persona_nickname} Muted {user_name}",
    "tools.user_block.block_block_title": "⛔ {persona_nickname} Blocked {user_name}",
    "tools.user_block.unmute_success_title": "🔊 {persona_nickname} Unmuted {user_name}",
    "tools.user_block.unblock_success_title": "✅ {persona_nickname} Unblocked {user_name}",
    "commands.refresh.title": "🧹 Conversation History Cleared",
    "commands.impersonate.system_title": "System Message",
    "commands.generate.scene.success_title": "🎬 Scene Directive",
    "commands.compact.summary_title": "🧹 Compact Summary",
    "commands.compact.roleplay_scene_title": "🧹 Roleplay Scene Summary",
    "commands.compact.manual_entry_title": "🧹 Manual Entry",
    "commands.compact.summary_title_refreshed": "🧹 Compact Summary (Refreshed)",
    "commands.compact.roleplay_scene_title_refreshed": "🧹 Roleplay Scene Summary (Refreshed)",
    "commands.compact.manual_entry_title_refreshed": "🧹 Manual Entry (Refreshed)",
    "commands.compact.roleplay_character_title_prefix": "🧹 Character Summary: ",
    "reminders.reminder_set_title": "⏰ {persona_nickname} Set a Reminder!",
    "reminders.recurring_task_set_title": "🔁 {persona_nickname} Set a Recurring Task!",
    "reminders.task_set_title": "📋 {persona_nickname} Set a Task!",
    "genai.fallback_used_title": "⚠️ Fallback Model Used",
    "genai.error_stream_timeout_title": "⌛ Response Timed Out",
    "genai.empty_response_title": "🤐 Empty Response",
    "genai.max_iterations_title": "🔁 Too Many Tool Calls",
    "genai.no_response_title": "😶 No Response",
    "reminders.reminder_triggered_title": "⏰ Reminder!",
    "reminders.task_triggered_title": "📋 Task Time!",
    "commands.reward.headpat.embed_title": "🤚 {persona_nickname} Got a Headpat!",
    "commands.reward.cookie.embed_title": "🍪 {persona_nickname} Got a Cookie!",
    "commands.punish.scold.embed_title": "💢 {persona_nickname} Was Scolded!",
    "commands.punish.timeout.embed_title": "⏳ {persona_nickname} Was Put in Timeout!",
    # The "Replying to …" notice of persona webhooks (BC3-03, BC9-04); matched against an embed's
    # description, author name or footer, never its title.
    "genai.message_interaction.reply_context_author": "↪️ Replying to {user_name}",
    "genai.message_interaction.reply_context_description": "[Jump to message]({message_url})",
    "genai.message_interaction.reply_context_footer": "Reply to a message from {user_name}",
}

CATALOG: dict[str, dict[str, str]] = {"en-US": EN_US}

_STATIC_KINDS: dict[str, str] = {
    **{
        f"genai.self_teach.{scope}_memory_{action}_title": "memory_learning"
        for scope in ("server", "personal")
        for action in ("learned", "updated", "deleted")
    },
    "tools.user_info_update.success_title": "user_info_update",
    **{
        f"tools.user_block.{name}_title": "user_moderation"
        for name in ("block_mute", "block_block", "unmute_success", "unblock_success")
    },
    "commands.refresh.title": "reset",
    "commands.impersonate.system_title": "system_injection",
    "commands.generate.scene.success_title": "scene_directive",
    **{f"commands.compact.{n}_title": "compact_summary" for n in ("summary", "roleplay_scene", "manual_entry")},
    **{
        f"commands.compact.{n}_title_refreshed": "compact_refresh"
        for n in ("summary", "roleplay_scene", "manual_entry")
    },
    "commands.compact.roleplay_character_title_prefix": "compact_summary",
    **{f"reminders.{n}_title": "reminder_set" for n in ("reminder_set", "recurring_task_set", "task_set")},
    **{
        f"genai.{n}_title": "diagnostic"
        for n in ("fallback_used", "error_stream_timeout", "empty_response", "max_iterations", "no_response")
    },
    "reminders.reminder_triggered_title": "diagnostic",
    "reminders.task_triggered_title": "diagnostic",
}

# Reward/punish commands are discovered from their keys (BC6-02), so adding one needs no code.
_DYNAMIC_KIND = re.compile(r"^commands\.(reward|punish)\.[^.]+\.embed_title$")
_REPLY_CONTEXT_KEY = "genai.message_interaction.reply_context_"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def kind_for_key(key: str) -> str | None:
    if key in _STATIC_KINDS:
        return _STATIC_KINDS[key]
    if key.startswith(_REPLY_CONTEXT_KEY):
        return "reply_context"
    dynamic = _DYNAMIC_KIND.match(key)
    return dynamic.group(1) if dynamic else None


def template_regex(template: str) -> re.Pattern[str]:
    """BC6-03: a full-string regex; `{message_url}` → an http(s) URL, other placeholders → lazy `.+?`."""
    pattern: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        pattern.append(re.escape(template[last : match.start()]))
        pattern.append(r"https?://\S+" if match.group(1) == "message_url" else ".+?")
        last = match.end()
    pattern.append(re.escape(template[last:]))
    return re.compile("".join(pattern), re.DOTALL)


class CatalogError(RuntimeError):
    """The notice catalog is unusable (duplicate titles, unknown keys): startup must fail (BC6-02)."""


@dataclass(frozen=True)
class TitleIndex:
    exact: Mapping[str, str]
    templates: tuple[tuple[re.Pattern[str], str], ...]
    prefixes: tuple[tuple[str, str], ...]
    reply_context: tuple[re.Pattern[str], ...]


def build_index(catalog: Mapping[str, Mapping[str, str]]) -> TitleIndex:
    """Compile the catalog; raises CatalogError when a locale repeats a title or a key has no kind."""
    exact: dict[str, str] = {}
    templates: list[tuple[re.Pattern[str], str]] = []
    prefixes: list[tuple[str, str]] = []
    reply_context: list[re.Pattern[str]] = []
    for locale, titles in catalog.items():
        seen: dict[str, str] = {}
        for key, title in titles.items():
            if title in seen:
                raise CatalogError(f"notice catalog {locale}: {key} repeats the title of {seen[title]}")
            seen[title] = key
            kind = kind_for_key(key)
            if kind is None:
                raise CatalogError(f"notice catalog {locale}: {key} has no notice kind")
            if kind == "reply_context":
                reply_context.append(template_regex(title))
            elif key.endswith("_prefix"):
                prefixes.append((title, kind))
            elif _PLACEHOLDER.search(title):
                templates.append((template_regex(title), kind))
            else:
                exact[title] = kind
    return TitleIndex(exact, tuple(templates), tuple(prefixes), tuple(reply_context))


INDEX = build_index(CATALOG)

_FOOTER_TOKEN = re.compile(r"\[tomori:v1:([a-z_]+)\]")


def classify_title(title: str | None) -> str | None:
    """BC6-03 title-only path: exact → templates → prefixes; compared verbatim (no trimming)."""
    if not title:
        return None
    if title in INDEX.exact:
        return INDEX.exact[title]
    for regex, kind in INDEX.templates:
        if regex.fullmatch(title):
            return kind
    for prefix, kind in INDEX.prefixes:
        if title.startswith(prefix):
            return kind
    return None


def footer_token_kind(footer_text: str | None) -> str | None:
    """BC2-06/BC6-03: a `[tomori:v1:{kind}]` token anywhere in the footer naming a known kind."""
    for match in _FOOTER_TOKEN.finditer(footer_text or ""):
        if match.group(1) in PROTOCOL_KINDS:
            return match.group(1)
    return None


def classify_embed(embed: Embed) -> str | None:
    """BC6-03 full-embed path: the footer token wins, else the title."""
    return footer_token_kind(embed.footer_text) or classify_title(embed.title)


def marker_kind(embed: Embed) -> str | None:
    """BC2-04/06: `reset` or `compact_refresh` when this embed is a history marker."""
    kind = classify_embed(embed)
    return kind if kind in MARKER_KINDS else None


def is_reply_context_embed(embed: Embed) -> bool:
    """BC3-03: the bot's "Replying to …" notice, by protocol kind or by a localized template."""
    if classify_embed(embed) == "reply_context":
        return True
    texts = (embed.description, embed.author_name, embed.footer_text)
    return any(text and any(regex.fullmatch(text) for regex in INDEX.reply_context) for text in texts)


# ---------------------------------------------------------------------------------------------
# Components V2 (BC6-04)
# ---------------------------------------------------------------------------------------------

TEXT_DISPLAY = 10
_COMPONENT_TYPE_NAMES = {"text_display": TEXT_DISPLAY, "textdisplay": TEXT_DISPLAY}
_HEADING = re.compile(r"^#{1,3}\s+(.+)$")
_SUBTEXT = re.compile(r"^-#\s+(.+)$")


def component_field(node: Any, key: str) -> Any:
    """Read a field from a raw dict or a component object alike."""
    if isinstance(node, Mapping):
        return node.get(key)
    return getattr(node, key, None)


def component_type(node: Any) -> int | None:
    raw = component_field(node, "type")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        if raw.isdigit():
            return int(raw)
        return _COMPONENT_TYPE_NAMES.get(raw.lower().replace(" ", ""))
    value = getattr(raw, "value", None)  # discord.py ComponentType enums
    return value if isinstance(value, int) else None


def _text_displays(nodes: Iterable[Any]) -> list[str]:
    found: list[str] = []
    for node in nodes or ():
        if component_type(node) == TEXT_DISPLAY:
            content = component_field(node, "content")
            if isinstance(content, str) and content:
                found.append(content)
        found.extend(_text_displays(component_field(node, "components") or ()))
    return found


@dataclass(frozen=True)
class ComponentNotice:
    title: str | None
    description: str | None
    footer: str | None


def read_component_notice(components: Iterable[Any]) -> ComponentNotice | None:
    """Reconstruct `{title, description, footer}` from a CV2 tree (BC6-04); None without TextDisplay."""
    texts = _text_displays(components)
    if not texts:
        return None
    lines = "\n".join(texts).split("\n")
    title: str | None = None
    heading = _HEADING.match(lines[0])
    if heading:
        title = heading.group(1).strip()
        lines = lines[1:]
    footer: list[str] = []
    body: list[str] = []
    for line in lines:
        subtext = _SUBTEXT.match(line)
        if subtext:
            footer.append(subtext.group(1).strip())
        else:
            body.append(line)
    description = "\n".join(body).strip()
    return ComponentNotice(title, description or None, "\n".join(footer) or None)


# ---------------------------------------------------------------------------------------------
# Formatting (BC6-06, BC6-07)
# ---------------------------------------------------------------------------------------------

SYSTEM_EMBED_PREAMBLE = "[System: The following content came from a system-produced embed]"
_TITLED_KINDS = frozenset({"memory_learning", "reminder_set", "user_info_update", "user_moderation"})
_WRAPPED_KINDS = frozenset({"memory_learning", "reward", "punish", "user_info_update", "user_moderation"})
_WS = re.compile(r"\s+")


def format_notice(kind: str, title: str | None, description: str, persona_nickname: str) -> str:
    """The `[System: …]` text of one notice, identical for embeds and CV2 (BC6-06); its title and
    body can neither end the frame nor start another (``chatcontext.core.frames``)."""
    if kind in ("system_injection", "scene_directive"):
        return system_frame(description)
    if kind in ("compact_summary", "compact_refresh"):
        return system_frame(f"## {title}\n{description}" if title else description)
    body = description
    if persona_nickname:
        body = re.sub(rf"^{re.escape(persona_nickname)}:\s*", "", body, count=1, flags=re.IGNORECASE)
    if kind in _TITLED_KINDS and title:
        body = f"{title}\n{body}"
    if kind in _WRAPPED_KINDS:
        return system_frame(body)
    return f"{SYSTEM_EMBED_PREAMBLE}\n{inert(body)}"


def _clip(value: str | None, limit: int) -> str:
    text = _WS.sub(" ", value or "").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


_MAX_DIAGNOSTIC_FIELDS = 6


def format_diagnostic_block(embed: Embed) -> str:
    """BC6-07: a bounded, whitespace-collapsed digest of an error/diagnostic embed (self-debug only)."""
    lines = ["Tomori emitted an error embed." if embed.color == ERROR_COLOR else "Tomori emitted a diagnostic embed."]
    for label, value, limit in (
        ("Title", embed.title, 160),
        ("Description", embed.description, 1200),
        ("Embed Author", embed.author_name, 120),
    ):
        clipped = _clip(value, limit)
        if clipped:
            lines.append(f"{label}: {clipped}")
    if embed.fields:
        shown = embed.fields[:_MAX_DIAGNOSTIC_FIELDS]
        rendered = [f"{_clip(f.name, 90) or 'Field'}: {_clip(f.value, 280)}" for f in shown]
        lines.append("Fields: " + " | ".join(rendered))
        hidden = len(embed.fields) - len(shown)
        if hidden > 0:
            lines.append(f"Additional fields omitted: {hidden}.")
    footer = _clip(embed.footer_text, 220)
    if footer:
        lines.append(f"Footer: {footer}")
    return system_frame("\n".join(lines))
