"""Admission: is a message a trigger, and for which personas (issue 6).

Every surface admits the same way: it screens the author (``screen``, no I/O), gathers the signals
of its transport (mention, the replied-to message, DM) and calls ``admit_message``, which picks the
responders (``select_responders``) and, only when someone is addressed, reads the author's privacy
level and blocks and decides (``admit``). Everything but ``admit_message`` is a pure function over
value objects.

- Never admitted: the bot's own messages, any webhook message (ours are persona replies, others are
  integrations) and other bots — so personas never answer each other in a loop.
- Triggers: a DM, a mention of the bot, a reply to a persona's message (the bot's own or an alter's
  webhook message), an ``@name`` written before a persona's name or trigger word, or a persona trigger
  word (data-model.md §2.7 single-owner words, matched with participants.md D-12). Deliberate Trigger
  Mode turns bare trigger words off for routing; the explicit signals (mention, ``@name``, reply, DM)
  trigger under either mode. The mode is the author's personal setting (``personal_dtm``: ``on`` /
  ``off``), else the server's. A server with always-reply on addresses its main persona with every
  message.
- A privacy-FULL user cannot trigger (participants.md P-01). An active ``mute`` or ``block`` row
  stops that user triggering that persona. The personalization blacklist does not stop triggering:
  it only withholds memories and saved names.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.conversation.db import Db
from bot.conversation.state import AuthorState, ServerState, load_author_state
from chatcontext.core.participants.triggers import compile_trigger, triggered_personas
from chatcontext.core.types import DiscordMessage, PersonaInfo, PrivacyLevel, UserRow

# Message types a person can type; joins, pins, boosts and the like never trigger.
TRIGGERABLE_TYPES = frozenset({"default", "reply"})


class Skip(enum.StrEnum):
    OWN_MESSAGE = "own_message"
    WEBHOOK = "webhook"
    BOT_AUTHOR = "bot_author"
    SYSTEM_MESSAGE = "system_message"
    NOT_TRIGGERED = "not_triggered"
    PRIVACY_FULL = "privacy_full"
    BLOCKED = "blocked"


@dataclass(frozen=True)
class TriggerSignals:
    """What the message itself says about who is addressed, before any database read."""

    is_dm: bool = False
    mentions_bot: bool = False
    # The persona whose message this one replies to (the bot's own or our alter webhook's), if any.
    replied_persona_id: int | None = None


@dataclass(frozen=True)
class Admission:
    """Who answers, or why nobody does; ``admit_message`` adds the author's rows it read."""

    personas: tuple[PersonaInfo, ...] = ()
    skip: Skip | None = None
    author: AuthorState | None = None

    @property
    def admitted(self) -> bool:
        return self.skip is None


def screen(message: DiscordMessage, bot_user_id: str) -> Skip | None:
    """The checks that need no I/O: who wrote the message and what kind it is."""
    if message.author.id == bot_user_id:
        return Skip.OWN_MESSAGE
    if message.webhook_id:
        return Skip.WEBHOOK
    if message.author.bot:
        return Skip.BOT_AUTHOR
    if message.type not in TRIGGERABLE_TYPES:
        return Skip.SYSTEM_MESSAGE
    return None


def at_named_personas(personas: Sequence[PersonaInfo], content: str) -> list[PersonaInfo]:
    """The personas addressed as ``@name`` in the text: their nickname or one of their (single-owner)
    trigger words written right after ``@``, matched like a trigger word (D-12). Alters have no Discord
    account to mention, and in the playground the main persona has none either, so this is how a
    member addresses a persona explicitly by typing."""
    return [
        persona
        for persona in personas
        if any(
            compile_trigger("@" + word)(content)
            for word in (persona.persona_nickname, *map(str, persona.trigger_words))
            if word.strip()
        )
    ]


def deliberate_mode_for(user_row: UserRow | None, *, server_mode: bool) -> bool:
    """Deliberate Trigger Mode for one author: their personal setting ``on``/``off``, else (``follow``,
    or no row yet) the server's."""
    personal = user_row.personal_dtm if user_row is not None else "follow"
    return {"on": True, "off": False}.get(personal, server_mode)


def select_responders(
    personas: Sequence[PersonaInfo],
    signals: TriggerSignals,
    content: str,
    *,
    deliberate_trigger_mode: bool,
    always_reply: bool = False,
) -> list[PersonaInfo]:
    """Which personas answer, in catalog order (main persona first, then alters by id).

    DMs and mentions address the main persona; a reply addresses the persona replied to; ``@name``
    addresses the persona named; trigger words address every persona owning a matching word. [DES]
    Deliberate Trigger Mode keeps only the explicit signals (mention, ``@name``, reply, DM), as
    participants.md T-13 expects of the turn plan.
    [DES] Always-reply (the server's setting) addresses the main persona on every message, whatever
    the trigger mode: the moderator asked for an answer to everything.
    """
    chosen: set[int | None] = set()
    main = next((p for p in personas if not p.is_alter), None)
    if main is not None and (signals.is_dm or signals.mentions_bot or always_reply):
        chosen.add(main.persona_id)
    if signals.replied_persona_id is not None:
        chosen.add(signals.replied_persona_id)
    if not signals.is_dm:
        chosen.update(p.persona_id for p in at_named_personas(personas, content))
    if not deliberate_trigger_mode and not signals.is_dm:
        chosen.update(p.persona_id for p in triggered_personas(personas, content))
    return [p for p in personas if p.persona_id in chosen]


def admit(responders: Sequence[PersonaInfo], *, privacy_level: int, blocked_persona_ids: frozenset[int]) -> Admission:
    """The decision for a message past ``screen`` whose ``select_responders`` result is known.

    ``blocked_persona_ids`` are the personas with an active mute or block row for the author.
    """
    if not responders:
        return Admission(skip=Skip.NOT_TRIGGERED)
    if privacy_level == PrivacyLevel.FULL:
        return Admission(skip=Skip.PRIVACY_FULL)
    allowed = tuple(p for p in responders if p.persona_id not in blocked_persona_ids)
    return Admission(personas=allowed) if allowed else Admission(skip=Skip.BLOCKED)


async def admit_message(
    message: DiscordMessage, signals: TriggerSignals, server: ServerState, *, db: Db, now_ms: int
) -> Admission:
    """The admission of a message past ``screen``: its responders and, only when someone could be
    addressed, the author's rows (registered on first contact) and the decision over them.

    Whether trigger words count depends on the author's personal mode, which is in their row: the
    responders are first chosen as if trigger words counted (no match: nobody, and no read), then
    again under the author's mode once the row is read."""
    config = server.config

    def responders(deliberate: bool) -> list[PersonaInfo]:
        return select_responders(
            server.personas,
            signals,
            message.content,
            deliberate_trigger_mode=deliberate,
            always_reply=config.always_reply_enabled,
        )

    if not responders(False):
        return Admission(skip=Skip.NOT_TRIGGERED)
    author = await db(load_author_state)(server.server_id, message.author, now_ms)
    chosen = responders(deliberate_mode_for(author.user_row, server_mode=config.deliberate_trigger_mode))
    decision = admit(chosen, privacy_level=author.user_row.privacy_level, blocked_persona_ids=author.muted_persona_ids)
    return replace(decision, author=author) if decision.admitted else decision


def normalize_persona_name(name: str) -> str:
    """BC3-10 name comparison: trim, drop a leading ``@``, collapse spaces, lowercase."""
    return " ".join(name.strip().removeprefix("@").split()).lower()


def persona_for_webhook_name(personas: Sequence[PersonaInfo], username: str) -> PersonaInfo | None:
    """The persona an alter webhook message was sent as; sprite labels ``Name (sprite)`` included."""
    wanted = normalize_persona_name(username)
    candidates = [wanted]
    if wanted.endswith(")") and " (" in wanted:
        candidates.append(wanted.rsplit(" (", 1)[0])
    for candidate in candidates:
        for persona in personas:
            if normalize_persona_name(persona.persona_nickname) == candidate:
                return persona
    return None
