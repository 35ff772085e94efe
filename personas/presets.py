"""SillyTavern chat-completion presets read into what a persona stores (issue 31 item 4).

A preset file is hostile input: ``parse_preset`` checks its shape and values and either returns the
whole of it or raises ``PresetError`` with one line naming the key. What it keeps:

- the prompt nodes in the preset's order (``prompt_order``: the global list, character id 100001,
  as SillyTavern uses it; else 100000; else the first; without one, the ``prompts`` as listed), each
  ``{"identifier", "marker", "content", "role", "enabled"}`` for ``chatcontext.core.preset``;
- the sampling settings it carries (``personas.values.sampling``);
- the file itself (``source``), unknown keys included, minus the keys SillyTavern keeps credentials
  in, so nothing secret is stored or shown.

The platform's system instruction always stays: ``main`` is a marker of it, and the preset's own
main prompt is a custom node just before it; a preset that leaves ``main`` out or disables it gets
the marker first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from personas.values.sampling import Sampling, SamplingError

MAX_PRESET_BYTES = 2 * 1024 * 1024
MAX_PROMPTS = 500
MAX_IDENTIFIER_CHARS = 200
MAX_CONTENT_CHARS = 100_000
# SillyTavern's markers: slots its prompt builder fills (chatcontext.core.preset maps those it has).
MARKERS = frozenset(
    {
        "main",
        "chatHistory",
        "dialogueExamples",
        "charDescription",
        "charPersonality",
        "scenario",
        "personaDescription",
        "worldInfoBefore",
        "worldInfoAfter",
    }
)
GLOBAL_ORDER_IDS = (100001, 100000)
ROLES = {"system": "system", "user": "user", "assistant": "model"}
# Where SillyTavern keeps a proxy's address, password and extra headers: never stored.
SECRET_KEYS = frozenset({"proxy_password", "reverse_proxy", "custom_include_headers", "custom_url"})
# preset key → Sampling field
SAMPLING_KEYS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "openai_max_tokens": "max_reply_tokens",
    "seed": "seed",
}
INTEGER_SETTINGS = frozenset({"max_reply_tokens", "seed"})


class PresetError(ValueError):
    """The file is no chat-completion preset, or a value in it is unusable: one line, naming the key."""


@dataclass(frozen=True)
class ParsedPreset:
    name: str
    nodes: tuple[dict[str, Any], ...]
    # The sampling fields the preset sets (Sampling field → value); the others stay as they were.
    sampling: dict[str, Any]
    source: dict[str, Any]
    notes: tuple[str, ...]


def parse_preset(data: bytes, *, name: str) -> ParsedPreset:
    if len(data) > MAX_PRESET_BYTES:
        raise PresetError(f"the file is larger than {MAX_PRESET_BYTES // (1024 * 1024)} MiB")
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PresetError(f"not a JSON file ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or not ("prompts" in doc or any(k in doc for k in SAMPLING_KEYS)):
        raise PresetError("not a SillyTavern chat-completion preset (no prompts and no sampling settings)")
    sampling = _sampling(doc)
    nodes, notes = _nodes(doc)
    source = {key: value for key, value in doc.items() if key not in SECRET_KEYS}
    return ParsedPreset(name=name[:100], nodes=nodes, sampling=sampling, source=source, notes=notes)


def _no_constant(value: str) -> Any:
    raise ValueError(f"{value} is not JSON")


def _sampling(doc: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, field_name in SAMPLING_KEYS.items():
        if key not in doc:
            continue
        value = doc[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise PresetError(f"{key}: {json.dumps(value)[:40]} is not a number")
        if field_name in INTEGER_SETTINGS:
            if value != int(value):
                raise PresetError(f"{key}: {value} is not a whole number")
            value = int(value)
        # SillyTavern's seed -1: a new random seed each time, which is the provider's default.
        values[field_name] = None if field_name == "seed" and value == -1 else value
    try:
        Sampling(**values)
    except SamplingError as exc:
        raise PresetError(str(exc)) from None
    return values


def _prompts(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    prompts = doc.get("prompts", [])
    if not isinstance(prompts, list) or len(prompts) > MAX_PROMPTS:
        raise PresetError(f"prompts: not a list of at most {MAX_PROMPTS} prompts")
    by_id: dict[str, Mapping[str, Any]] = {}
    for index, prompt in enumerate(prompts):
        where = f"prompts[{index}]"
        if not isinstance(prompt, dict):
            raise PresetError(f"{where}: not an object")
        identifier = prompt.get("identifier")
        if not isinstance(identifier, str) or not identifier.strip() or len(identifier) > MAX_IDENTIFIER_CHARS:
            raise PresetError(f"{where}.identifier: not a name of 1 to {MAX_IDENTIFIER_CHARS} characters")
        content = prompt.get("content", "")
        if content is None:
            content = ""
        if not isinstance(content, str) or len(content) > MAX_CONTENT_CHARS or "\x00" in content:
            raise PresetError(f"{where}.content: not a text of at most {MAX_CONTENT_CHARS} characters")
        if prompt.get("role", "system") not in ROLES:
            raise PresetError(f"{where}.role: {json.dumps(prompt.get('role'))[:40]} is not system, user or assistant")
        if not isinstance(prompt.get("marker", False), bool):
            raise PresetError(f"{where}.marker: not true or false")
        by_id[identifier] = prompt
    return by_id


def _order(doc: Mapping[str, Any], prompts: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """(identifier, enabled) in the preset's order."""
    orders = doc.get("prompt_order")
    if orders is None:
        return [(identifier, prompt.get("enabled", True) is not False) for identifier, prompt in prompts.items()]
    if not isinstance(orders, list) or not all(isinstance(o, dict) for o in orders):
        raise PresetError("prompt_order: not a list of objects")
    by_character = {o.get("character_id"): o for o in orders}
    chosen = next((by_character[c] for c in GLOBAL_ORDER_IDS if c in by_character), orders[0] if orders else {})
    entries = chosen.get("order", [])
    if not isinstance(entries, list) or len(entries) > MAX_PROMPTS:
        raise PresetError(f"prompt_order: an order that is not a list of at most {MAX_PROMPTS} entries")
    order = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("identifier"), str):
            raise PresetError(f"prompt_order order[{index}]: not an object with an identifier")
        order.append((entry["identifier"], entry.get("enabled", True) is not False))
    return order


def _node(identifier: str, *, marker: bool, enabled: bool, content: str = "", role: str = "system") -> dict[str, Any]:
    return {"identifier": identifier, "marker": marker, "content": content, "role": ROLES[role], "enabled": enabled}


def _nodes(doc: Mapping[str, Any]) -> tuple[tuple[dict[str, Any], ...], tuple[str, ...]]:
    prompts = _prompts(doc)
    nodes: list[dict[str, Any]] = []
    notes: list[str] = []
    main_enabled = False
    for identifier, enabled in _order(doc, prompts):
        prompt = prompts.get(identifier)
        if prompt is None:
            if identifier in MARKERS:
                nodes.append(_node(identifier, marker=True, enabled=enabled))
            else:
                notes.append(f"prompt_order names {identifier!r}, which no prompt defines: left out")
            continue
        role = prompt.get("role", "system")
        content = prompt.get("content") or ""
        if prompt.get("injection_position") == 1:
            notes.append(f"{identifier!r} is set to go in the chat at a depth: placed in order instead")
        if identifier == "main":
            # The preset's main prompt, then the platform's instruction (which it never replaces).
            if content.strip():
                nodes.append(_node("main-prompt", marker=False, enabled=enabled, content=content, role=role))
            nodes.append(_node("main", marker=True, enabled=True))
            main_enabled = True
        elif prompt.get("marker") is True:
            nodes.append(_node(identifier, marker=True, enabled=enabled))
        else:
            nodes.append(_node(identifier, marker=False, enabled=enabled, content=content, role=role))
    if not main_enabled:
        nodes.insert(0, _node("main", marker=True, enabled=True))
    return tuple(nodes), tuple(notes)
