from personas.models.access import ApiToken, ServerModerator
from personas.models.cards import Lorebook, LorebookEntry, PersonaCard
from personas.models.generation import PersonaPreset, PersonaSampling
from personas.models.history import ActorKind
from personas.models.memories import DeletedPersonalMemory, DeletedServerMemory, PersonalMemory, ServerMemory
from personas.models.moderation import PersonalizationBlacklist, PersonaUserBlock
from personas.models.personas import (
    FIRST_LINEAGE_ID,
    GLOBAL_LINEAGE_ID,
    Persona,
    PersonaAttribute,
    PersonaLineage,
    PersonaSpriteMessage,
)
from personas.models.reminders import Reminder
from personas.models.servers import (
    MatrixChannelLink,
    Server,
    ServerEmoji,
    ServerMember,
    ServerSettings,
    ServerSticker,
)
from personas.models.steering import SHORT_TERM_MEMORY_MAX_CHARS, ConversationSummary, ShortTermMemory
from personas.models.users import (
    PROFILE_FIELDS,
    AddressingStyle,
    DiscordUser,
    PrivacyLevel,
    StatCounter,
    UserPersonaNamingPreference,
)
from personas.models.versions import USER_ROWS_SCOPE, PersonalizationVersion

__all__ = [
    "FIRST_LINEAGE_ID",
    "GLOBAL_LINEAGE_ID",
    "PROFILE_FIELDS",
    "SHORT_TERM_MEMORY_MAX_CHARS",
    "USER_ROWS_SCOPE",
    "ActorKind",
    "AddressingStyle",
    "ApiToken",
    "ConversationSummary",
    "DeletedPersonalMemory",
    "DeletedServerMemory",
    "DiscordUser",
    "Lorebook",
    "LorebookEntry",
    "MatrixChannelLink",
    "Persona",
    "PersonaAttribute",
    "PersonaCard",
    "PersonaLineage",
    "PersonaPreset",
    "PersonaSampling",
    "PersonaSpriteMessage",
    "PersonaUserBlock",
    "PersonalMemory",
    "PersonalizationBlacklist",
    "PersonalizationVersion",
    "PrivacyLevel",
    "Reminder",
    "Server",
    "ServerEmoji",
    "ServerMember",
    "ServerMemory",
    "ServerModerator",
    "ServerSettings",
    "ServerSticker",
    "ShortTermMemory",
    "StatCounter",
    "UserPersonaNamingPreference",
]
