"""SillyTavern presets read into what a persona stores (issue 31 item 4): a real public preset, the
shapes SillyTavern writes, and hostile files, each refused with one line and nothing kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.preset import Preset
from personas.presets import MAX_PRESET_BYTES, PresetError, parse_preset
from tests.personas.presets.preset_files import DEFAULT, real_preset


def parsed(doc: Any) -> Any:
    return parse_preset(json.dumps(doc).encode(), name="test.json")


def test_sillytaverns_default_preset_gives_its_global_order_and_sampling() -> None:
    preset = parse_preset(DEFAULT.read_bytes(), name=DEFAULT.name)

    # The global order (character 100001): the preset's main prompt, then the platform's instruction.
    assert [(n["identifier"], n["marker"], n["enabled"]) for n in preset.nodes] == [
        ("main-prompt", False, True),
        ("main", True, True),
        ("worldInfoBefore", True, True),
        ("personaDescription", True, True),
        ("charDescription", True, True),
        ("charPersonality", True, True),
        ("scenario", True, True),
        ("enhanceDefinitions", False, False),
        ("nsfw", False, True),
        ("worldInfoAfter", True, True),
        ("dialogueExamples", True, True),
        ("chatHistory", True, True),
        ("jailbreak", False, True),
    ]
    assert (
        preset.nodes[0]["content"] == "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}."
    )
    # seed -1 is SillyTavern's "random": the provider's default, so not set.
    assert preset.sampling == {
        "temperature": 1,
        "top_p": 1,
        "presence_penalty": 0,
        "frequency_penalty": 0,
        "max_reply_tokens": 300,
        "seed": None,
    }
    assert preset.notes == ()


def test_unknown_keys_are_kept_and_credentials_are_not() -> None:
    doc = real_preset() | {"a_key_from_next_year": {"nested": [1, 2]}, "proxy_password": "hunter2"}
    preset = parsed(doc)

    assert preset.source["a_key_from_next_year"] == {"nested": [1, 2]}
    assert preset.source["top_k"] == 0 and preset.source["wi_format"] == "{0}"
    assert not {"proxy_password", "reverse_proxy", "custom_include_headers", "custom_url"} & set(preset.source)
    assert "hunter2" not in json.dumps(preset.source)


def test_stored_nodes_drive_the_preset_engine() -> None:
    preset = Preset.from_json(parse_preset(DEFAULT.read_bytes(), name="d").nodes)

    assert preset.has_marker("chatHistory") and preset.has_marker("main")
    assert [n.identifier for n in preset.nodes if not n.enabled] == ["enhanceDefinitions"]
    assert next(n for n in preset.nodes if n.identifier == "jailbreak").role == "system"


def test_a_preset_without_main_or_with_it_disabled_still_gets_the_platform_instruction_first() -> None:
    doc = real_preset()
    for order in doc["prompt_order"]:
        order["order"] = [e for e in order["order"] if e["identifier"] != "main"]
    assert parsed(doc).nodes[0] == {
        "identifier": "main",
        "marker": True,
        "content": "",
        "role": "system",
        "enabled": True,
    }

    doc = real_preset()
    doc["prompt_order"][1]["order"][0]["enabled"] = False
    nodes = parsed(doc).nodes
    assert nodes[0]["identifier"] == "main-prompt" and nodes[0]["enabled"] is False
    assert nodes[1]["identifier"] == "main" and nodes[1]["enabled"] is True


def test_without_prompt_order_the_prompts_go_in_their_listed_order_and_roles_map() -> None:
    doc = {
        "temperature": 0.7,
        "prompts": [
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "nudge", "role": "assistant", "content": "{{char}} smiles.", "injection_position": 1},
        ],
    }
    preset = parsed(doc)

    assert [(n["identifier"], n["role"]) for n in preset.nodes] == [
        ("main", "system"),
        ("chatHistory", "system"),
        ("nudge", "model"),
    ]
    assert preset.notes == ("'nudge' is set to go in the chat at a depth: placed in order instead",)


def test_an_order_naming_an_undefined_prompt_leaves_it_out_and_says_so() -> None:
    doc = {
        "prompts": [],
        "prompt_order": [{"character_id": 7, "order": [{"identifier": "ghost"}, {"identifier": "chatHistory"}]}],
    }
    preset = parsed(doc)

    assert [n["identifier"] for n in preset.nodes] == ["main", "chatHistory"]
    assert preset.notes == ("prompt_order names 'ghost', which no prompt defines: left out",)


MALFORMED = [
    (b"", "not a JSON file"),
    (b"\xff\xfe{", "not a JSON file"),
    (b'{"temperature": NaN}', "not a JSON file"),
    (b"[1, 2]", "not a SillyTavern chat-completion preset"),
    (b'{"spec": "chara_card_v2", "data": {"name": "Seraphina"}}', "not a SillyTavern chat-completion preset"),
    (b'{"temperature": "hot"}', 'temperature: "hot" is not a number'),
    (b'{"temperature": true}', "temperature: true is not a number"),
    (b'{"temperature": 5}', "temperature: 5 is outside 0 to 2"),
    (b'{"top_p": -0.5}', "top_p: -0.5 is outside 0 to 1"),
    (b'{"openai_max_tokens": 1.5}', "openai_max_tokens: 1.5 is not a whole number"),
    (b'{"openai_max_tokens": 0}', "max_reply_tokens: 0 is below 1"),
    (b'{"seed": 1e30}', "is not a 64-bit integer"),
    (b'{"prompts": {"main": 1}}', "prompts: not a list"),
    (b'{"prompts": [7]}', "prompts[0]: not an object"),
    (b'{"prompts": [{"content": "x"}]}', "prompts[0].identifier: not a name"),
    (b'{"prompts": [{"identifier": "a", "content": 3}]}', "prompts[0].content: not a text"),
    (b'{"prompts": [{"identifier": "a", "role": "narrator"}]}', 'prompts[0].role: "narrator" is not system'),
    (b'{"prompts": [{"identifier": "a", "marker": "yes"}]}', "prompts[0].marker: not true or false"),
    (b'{"prompts": [], "prompt_order": "main"}', "prompt_order: not a list of objects"),
    (b'{"prompts": [], "prompt_order": [{"order": [3]}]}', "prompt_order order[0]: not an object"),
    (b"[" * 100_000, "not a JSON file"),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_a_malformed_file_is_refused_with_one_line_naming_what(data: bytes, message: str) -> None:
    with pytest.raises(PresetError) as refused:
        parse_preset(data, name="bad.json")

    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_file_over_the_limit_is_refused_before_it_is_read_as_json() -> None:
    with pytest.raises(PresetError, match="larger than 2 MiB"):
        parse_preset(b" " * (MAX_PRESET_BYTES + 1), name="big.json")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(["prompts", "prompt_order", "temperature", "seed", "openai_max_tokens", "identifier", "order"])


@given(st.dictionaries(KEYS, JSON, max_size=4))
def test_any_json_is_either_a_preset_or_one_refusal(doc: dict[str, Any]) -> None:
    """Whatever a file holds, the parser answers a preset or a PresetError: never another exception."""
    try:
        preset = parsed(doc)
    except PresetError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(node["role"] in ("system", "user", "model") for node in preset.nodes)
