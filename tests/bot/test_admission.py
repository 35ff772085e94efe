"""Admission and responder selection (issue 6; data-model.md §2.7, participants.md D-12, P-01)."""

from __future__ import annotations

from bot.conversation.admission import (
    Skip,
    TriggerSignals,
    admit,
    deliberate_mode_for,
    persona_for_webhook_name,
    screen,
    select_responders,
)
from chatcontext.core.types import Author, DiscordMessage, PersonaInfo, PrivacyLevel, UserRow
from chatcontext.repository import resolve_single_owner_triggers

BOT_ID = "900"
TOMORI = PersonaInfo(persona_id=1, persona_nickname="Tomori", persona_lineage_id=10000, trigger_words=("tomori",))
ELLEN = PersonaInfo(
    persona_id=2, persona_nickname="Ellen", persona_lineage_id=10001, is_alter=True, trigger_words=("ellen", "tomori")
)
REN = PersonaInfo(persona_id=3, persona_nickname="Ren", persona_lineage_id=10002, is_alter=True, trigger_words=("ren",))
PERSONAS = resolve_single_owner_triggers([TOMORI, ELLEN, REN])


def msg(content: str, *, author_id: str = "111", bot: bool = False, webhook_id: str | None = None, kind="default"):
    return DiscordMessage(
        id="5000",
        channel_id="42",
        author=Author(id=author_id, username="ann", bot=bot),
        created_timestamp=0,
        type=kind,
        webhook_id=webhook_id,
        content=content,
        clean_content=content,
    )


def ids(personas) -> list[int | None]:
    return [p.persona_id for p in personas]


NO_SIGNALS = TriggerSignals()


def decide(
    content: str, signals=NO_SIGNALS, *, privacy=PrivacyLevel.MINIMAL, blocked=frozenset(), dtm=False, always=False
):
    responders = select_responders(PERSONAS, signals, content, deliberate_trigger_mode=dtm, always_reply=always)
    return admit(responders, privacy_level=privacy, blocked_persona_ids=frozenset(blocked))


def test_no_reply_loops_own_webhook_and_bot_messages_are_screened_out():
    assert screen(msg("tomori hi", author_id=BOT_ID, bot=True), BOT_ID) is Skip.OWN_MESSAGE
    assert screen(msg("tomori hi", author_id="77", webhook_id="9100"), BOT_ID) is Skip.WEBHOOK
    assert screen(msg("tomori hi", author_id="78", bot=True), BOT_ID) is Skip.BOT_AUTHOR
    assert screen(msg("tomori hi", kind="user_join"), BOT_ID) is Skip.SYSTEM_MESSAGE
    assert screen(msg("tomori hi"), BOT_ID) is None


def test_data_model_2_7_trigger_words_are_single_owner_main_persona_first():
    # "tomori" belongs to the main persona only, even though the alter Ellen lists it too.
    assert ids(decide("hey TOMORIII").personas) == [1]
    assert ids(decide("ellen and ren, hi").personas) == [2, 3]
    assert decide("rental prices").skip is Skip.NOT_TRIGGERED  # D-12: word boundaries


def test_mention_dm_and_reply_address_the_right_persona():
    assert ids(decide("hello", TriggerSignals(mentions_bot=True)).personas) == [1]
    assert ids(decide("hello", TriggerSignals(is_dm=True)).personas) == [1]
    assert ids(decide("hello", TriggerSignals(replied_persona_id=3)).personas) == [3]
    assert ids(decide("ren?", TriggerSignals(mentions_bot=True)).personas) == [1, 3]


def test_deliberate_trigger_mode_ignores_trigger_words_for_routing():
    assert decide("LIIILYAAA ellen", dtm=True).skip is Skip.NOT_TRIGGERED
    assert ids(decide("ellen", TriggerSignals(mentions_bot=True), dtm=True).personas) == [1]


def test_always_reply_addresses_the_main_persona_on_every_message_alters_only_when_triggered():
    assert ids(decide("anyone around?", always=True).personas) == [1]
    assert ids(decide("anyone around?", always=True, dtm=True).personas) == [1]
    assert ids(decide("ren, anyone around?", always=True).personas) == [1, 3]
    assert ids(decide("hello", TriggerSignals(replied_persona_id=3), always=True).personas) == [1, 3]
    assert decide("anyone around?").skip is Skip.NOT_TRIGGERED


def test_p01_always_reply_never_answers_privacy_full_or_blocking_users():
    assert decide("anyone around?", always=True, privacy=PrivacyLevel.FULL).skip is Skip.PRIVACY_FULL
    assert decide("anyone around?", always=True, blocked={1}).skip is Skip.BLOCKED


def test_p01_privacy_full_users_cannot_trigger():
    assert decide("tomori hi", privacy=PrivacyLevel.FULL).skip is Skip.PRIVACY_FULL
    assert decide("tomori hi", privacy=PrivacyLevel.PARTIAL).admitted


def test_mute_or_block_stops_that_user_triggering_that_persona_only():
    assert ids(decide("tomori and ren", blocked={3}).personas) == [1]
    assert decide("ren", blocked={3}).skip is Skip.BLOCKED


def test_select_responders_keeps_catalog_order():
    chosen = select_responders(
        PERSONAS, TriggerSignals(replied_persona_id=3), "ellen tomori", deliberate_trigger_mode=False
    )
    assert ids(chosen) == [1, 2, 3]


def test_webhook_names_map_to_personas_including_sprite_labels():
    assert persona_for_webhook_name(PERSONAS, " @ellen ") is not None
    assert persona_for_webhook_name(PERSONAS, "Ellen (smug)").persona_id == 2
    assert persona_for_webhook_name(PERSONAS, "Stranger") is None


def test_an_at_name_addresses_its_persona_under_either_trigger_mode():
    for dtm in (False, True):
        assert ids(decide("@tomori hi", dtm=dtm).personas) == [1]
        assert ids(decide("hey @Ren, and @ELLEN", dtm=dtm).personas) == [2, 3]
    # Not a persona's name after the @, nor an @ inside a word (an e-mail address).
    assert decide("@tomorrow hi", dtm=True).skip is Skip.NOT_TRIGGERED
    assert decide("write to ann@ren.example", dtm=True).skip is Skip.NOT_TRIGGERED


def test_the_personal_trigger_mode_wins_over_the_servers():
    def row(mode: str) -> UserRow:
        return UserRow(user_id=1, user_disc_id="111", personal_dtm=mode)

    assert deliberate_mode_for(row("on"), server_mode=False) is True
    assert deliberate_mode_for(row("off"), server_mode=True) is False
    assert deliberate_mode_for(row("follow"), server_mode=True) is True
    assert deliberate_mode_for(row("follow"), server_mode=False) is False
    assert deliberate_mode_for(None, server_mode=True) is True
