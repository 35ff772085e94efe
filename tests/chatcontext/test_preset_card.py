"""A character card's fields in a preset's slots (README "Presets": `charPersonality`, `scenario`,
the main prompt and the post-history slot, `{{original}}` standing for the preset's text)."""

from __future__ import annotations

from chatcontext.core.builder import build_context
from chatcontext.core.impersonation import ImpersonationIdentity
from chatcontext.core.preset import Preset, PresetNode
from chatcontext.core.types import CardFields, ContextItemTag
from tests.chatcontext.preset_turns import preset_inputs
from tests.chatcontext.turn_factory import U1, tomori

Tag = ContextItemTag
CARD = CardFields(
    personality="{{char}} is wry.",
    scenario="A rooftop with {{user}}.",
    system_prompt="Card system. {{original}}",
    post_history_instructions="{{ORIGINAL}} Card post.",
)


def texts(preset: Preset | None, card: CardFields | None = CARD, **changes: object) -> list[str]:
    items = build_context(preset_inputs(preset, persona=tomori(card=card), **changes)).items
    return [i.text for i in items if i.placement != "tail"]


def test_the_card_overrides_the_presets_main_and_post_history_prompts_keeping_the_original() -> None:
    preset = Preset(
        (
            PresetNode.custom("main-prompt", "Preset main."),
            PresetNode.marker("main"),
            PresetNode.marker("chatHistory"),
            PresetNode.custom("jailbreak", "Preset post."),
        )
    )
    out = texts(preset)
    assert out[0] == "Card system. Preset main."
    history_end = max(i for i, text in enumerate(out) if "yo" in text)
    assert out[history_end + 1] == "Preset post. Card post."


def test_a_preset_without_those_prompts_gets_the_cards_before_main_and_after_the_history() -> None:
    out = texts(Preset.from_markers("main", "chatHistory", "charDescription"))
    assert out[0] == "Card system."  # {{original}}: the preset has no main prompt of its own
    history_end = max(i for i, text in enumerate(out) if "yo" in text)
    assert out[history_end + 1] == "Card post."


def test_personality_follows_its_marker_and_scenario_takes_its_place() -> None:
    out = texts(Preset.from_markers("main", "scenario", "charDescription", "charPersonality", "chatHistory"))
    scenario = out.index("A rooftop with User.")
    assert "Tomori" in out[scenario + 1] and out[scenario + 2] == "Tomori is wry."


def test_disabled_or_missing_slots_and_empty_fields_leave_the_card_out() -> None:
    disabled = Preset(
        (
            PresetNode.marker("main"),
            PresetNode("scenario", enabled=False),
            PresetNode("charPersonality", enabled=False),
            PresetNode("jailbreak", is_marker=False, content="Preset post.", enabled=False),
            PresetNode.marker("chatHistory"),
        )
    )
    out = texts(disabled)
    assert not any("rooftop" in t or "wry" in t or "post." in t for t in out)
    preset = Preset.from_markers("main", "charPersonality", "scenario", "chatHistory")
    assert preset.with_card(CardFields()) == preset
    assert texts(preset, card=CardFields()) == texts(preset, card=None)


def test_an_impersonation_turn_and_a_persona_without_a_preset_read_no_card() -> None:
    preset = Preset.from_markers("main", "charPersonality", "scenario", "chatHistory")
    impersonation = ImpersonationIdentity(user_id=U1, nickname="Ann")
    assert texts(preset, impersonation=impersonation) == texts(preset, card=None, impersonation=impersonation)
    assert texts(None) == texts(None, card=None)
