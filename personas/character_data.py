"""A character card and a lorebook as values: what `characters` reads from files and writes back, and
what the card actions store. No Django: the readers build these from hostile bytes before anything
is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

JSONDict = dict[str, Any]
Logic = Literal["and_any", "not_all", "not_any", "and_all"]
Position = Literal["before_char", "after_char", "at_depth"]
LOGICS: tuple[Logic, ...] = ("and_any", "not_all", "not_any", "and_all")  # SillyTavern's selectiveLogic 0..3
POSITIONS: tuple[Position, ...] = ("before_char", "after_char", "at_depth")
DEFAULT_SCAN_DEPTH = 2  # SillyTavern's world_info_depth default
DEFAULT_TOKEN_BUDGET = 2048


@dataclass(frozen=True)
class LoreEntry:
    uid: int
    content: str
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    comment: str = ""
    selective: bool = False
    selective_logic: Logic = "and_any"
    constant: bool = False
    enabled: bool = True
    insertion_order: int = 100
    position: Position = "before_char"
    depth: int = 4
    scan_depth: int | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    extensions: JSONDict = field(default_factory=dict)


@dataclass(frozen=True)
class LorebookData:
    entries: tuple[LoreEntry, ...]
    name: str = ""
    description: str = ""
    scan_depth: int = DEFAULT_SCAN_DEPTH
    token_budget: int = DEFAULT_TOKEN_BUDGET
    recursive_scanning: bool = False
    extensions: JSONDict = field(default_factory=dict)


@dataclass(frozen=True)
class DialogueLine:
    """One line of example dialogue: `user` is the other speaker, `model` the character."""

    role: Literal["user", "model"]
    text: str


@dataclass(frozen=True)
class CardData:
    name: str
    spec: str = "chara_card_v3"
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    alternate_greetings: tuple[str, ...] = ()
    example_dialogue: tuple[DialogueLine, ...] = ()
    system_prompt: str = ""
    post_history_instructions: str = ""
    creator_notes: str = ""
    creator: str = ""
    character_version: str = ""
    tags: tuple[str, ...] = ()
    extensions: JSONDict = field(default_factory=dict)
    lorebook: LorebookData | None = None
    avatar_png: bytes | None = None
