from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from personas.models.history import audit_trail
from personas.validators import validate_discord_id, validate_discord_id_list

MESSAGE_FETCH_LIMIT_MIN = 20
MESSAGE_FETCH_LIMIT_DEFAULT = 80
MESSAGE_FETCH_LIMIT_MAX = 100


class Server(models.Model):
    """A Discord guild (or the pseudo row of a DM channel)."""

    server_id = models.BigAutoField(primary_key=True)
    server_disc_id = models.CharField(
        "server Discord ID",
        max_length=20,
        unique=True,
        validators=[validate_discord_id],
        help_text="The server's ID on Discord (Developer Mode → right-click the server → Copy Server ID). "
        "The bot fills it in when it first hears from the server.",
    )
    name = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text="The server's name as the personas are told it (server info, server memories, join notices).",
    )
    description = models.TextField(
        blank=True, default="", help_text="Told to the personas with the server's name: what this community is about."
    )
    is_dm_channel = models.BooleanField(
        "is a direct-message chat",
        default=False,
        help_text="This row stands for a direct-message conversation, not a server: the persona is told it is a "
        "private chat, and no emojis or stickers are offered.",
    )
    registration_locale = models.CharField(
        max_length=16,
        null=True,
        blank=True,
        help_text="Language of the bot's own notices here (failed replies, reminders) and of users first seen "
        "here, e.g. en-US or ja. Discord's preferred locale of the server; empty = en-US.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "servers"
        ordering = ["name", "server_id"]

    def __str__(self) -> str:
        return self.name or f"server {self.server_disc_id}"

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        creating = self._state.adding
        super().save(*args, **kwargs)
        if creating:
            ServerSettings.objects.get_or_create(server=self)


class ServerSettings(models.Model):
    """One row per server: the reference's split config tables consolidated (data-model.md §2.2)."""

    class LLMProvider(models.TextChoices):
        DEFAULT = "", "Platform default"
        OPENAI = "openai", "OpenAI-compatible API"
        ECHO = "echo", "Offline echo (demo/testing only)"

    server = models.OneToOneField(Server, on_delete=models.CASCADE, related_name="settings", primary_key=True)
    message_fetch_limit = models.IntegerField(
        default=MESSAGE_FETCH_LIMIT_DEFAULT,
        help_text="Messages of history read per turn; clamped to 20–100 when read.",
    )
    timezone_offset = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("-12")), MaxValueValidator(Decimal("14"))],
        help_text="Server clock offset from UTC in hours (5.5 allowed).",
    )
    humanizer_degree = models.PositiveSmallIntegerField(
        default=1,
        validators=[MaxValueValidator(3)],
        help_text="0–3. Stored, but nothing reads it yet: changing it changes no prompt and no reply.",
    )
    memory_tagging_enabled = models.BooleanField(
        "memory tagging",
        default=False,
        help_text="On: a personal memory with tags (e.g. cats, exams) reaches the prompt only when one of its tags "
        "appears in the recent conversation. Memories without tags always do.",
    )
    channel_memory_enabled = models.BooleanField(
        "channel memory",
        default=False,
        help_text="On: a personal memory tagged with a channel (e.g. #art) reaches the prompt only in the channel "
        "of that name. Memories without a channel tag reach every channel.",
    )
    personal_memories_enabled = models.BooleanField(
        "personal memories",
        default=True,
        help_text="Personalization master switch. Off: no one's personal memories, saved nickname, pronouns or "
        "other profile details reach this server's prompts (the exclusion log says so); live names still do.",
    )
    self_teaching_enabled = models.BooleanField(
        "self teaching",
        default=True,
        help_text="On: personas may save what they learn as memories by themselves (a tool call, confirmed in the "
        "channel). Off: they are not offered the memory tools; moderators still write memories.",
    )
    tools_enabled = models.BooleanField(
        "persona tools",
        default=True,
        help_text="On: personas may act, not only reply: remember, set and cancel reminders, react to messages. "
        "Off: no tool is offered to the model on this server.",
    )
    global_memories_enabled = models.BooleanField(
        "global memories from tools",
        default=False,
        help_text="On: a persona's memory tools may write lineage 0 (memories every persona of every server reads) "
        "when asked. Off: what a persona learns stays in its own lineage.",
    )
    prompt_snapshot_enabled = models.BooleanField(
        "/prompt command",
        default=True,
        help_text="On: moderators (Manage Server) can ask the bot on Discord with /prompt last for a link to the "
        "prompt inspector's record of the latest turn. Off: the command says it is turned off here. Every turn "
        "is recorded either way (kept for the retention days above) and stays in the admin's Prompt records.",
    )
    emoji_usage_enabled = models.BooleanField(
        "emoji usage",
        default=True,
        help_text="On: the persona is given this server's custom emojis to use in replies (not in role-play channels).",
    )
    sticker_usage_enabled = models.BooleanField(
        "sticker usage",
        default=True,
        help_text="On: the persona is given this server's stickers to send (not in role-play channels).",
    )
    time_awareness_enabled = models.BooleanField(
        "time awareness",
        default=True,
        help_text="On: one person's messages in a row are merged into one entry only when sent on the same day "
        "(server time), so the persona sees where a day ends. Off: merged whatever the day.",
    )
    user_blocking_enabled = models.BooleanField(
        "user blocking",
        default=True,
        help_text="Stored, but nothing reads it yet: persona blocks (Persona user blocks) apply either way.",
    )
    deliberate_trigger_mode = models.BooleanField(
        "deliberate trigger mode",
        default=False,
        help_text="On: personas answer only when mentioned (a mention of the bot, or @ before a persona's name), "
        "replied to or written to in a DM; their trigger words no longer start a reply. A member's own setting "
        "(personal deliberate trigger mode on the user page) wins for their messages.",
    )
    always_reply_enabled = models.BooleanField(
        "always reply",
        default=False,
        help_text="On: the main persona answers every message people post in this server's channels, no trigger "
        "needed (also in deliberate trigger mode); alters still answer only when triggered. Privacy-Full, muted "
        "and blocking users are still not answered, and bots never are.",
    )
    refresh_open_to_all = models.BooleanField(
        "/refresh for everyone",
        default=False,
        help_text="On: every member may clear a channel's conversation with /refresh. Off: only members with Manage "
        "Messages may.",
    )
    auto_compact_enabled = models.BooleanField(
        "automatic compaction",
        default=False,
        help_text="On: when a channel's conversation fills the history window (Message fetch limit), the model writes "
        "a summary of it before the next reply, and the conversation continues from the summary.",
    )
    rp_channel_ids = models.JSONField(
        "role-play channels",
        default=list,
        blank=True,
        validators=[validate_discord_id_list],
        help_text="In these channels (and their threads) the persona is given no emojis or stickers.",
    )
    private_channel_ids = models.JSONField(
        "private channels",
        default=list,
        blank=True,
        validators=[validate_discord_id_list],
        help_text="Stored, but nothing reads it yet: listing a channel here changes nothing for now.",
    )
    voice_transcript_chat_mode = models.BooleanField(
        "voice transcript chat mode",
        default=False,
        help_text="On: voice messages and audio files are not transcribed and are left out of the prompt. Off: "
        "each voice message is transcribed, and the persona reads the transcript as the message.",
    )
    uncensor_injection_enabled = models.BooleanField(
        "uncensor injection",
        default=False,
        help_text="On: the prompt's last instruction tells the model that everyone in the conversation is an adult "
        "(18+). For mature role-play servers; check your model provider's terms.",
    )
    uncensor_unicode_space_enabled = models.BooleanField(
        "uncensor Unicode spaces",
        default=False,
        help_text="On: the prompt's last instruction asks the model to write the blank character “⠀” (U+2800) "
        "instead of normal spaces, which some providers' output filters do not catch.",
    )
    # Images and streaming (bot.conversation.media, bot.discord.reply_stream). Whether the model can see
    # images is the server's to say: the endpoint does not tell, and a text-only model refuses a prompt
    # that carries them.
    model_accepts_images = models.BooleanField(
        "model accepts images",
        default=False,
        help_text="On: the images of the conversation (attachments, stickers, a GIF's first frame) are sent to "
        "the model with the messages they belong to, newest first up to the limits below. Off: the persona "
        "reads only the text note that an image was there. Turn it on only for a vision model.",
    )
    max_images_per_turn = models.PositiveSmallIntegerField(
        "images per turn",
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(16)],
        help_text="1–16. At most this many images go with one reply, the newest first; older ones keep their "
        "text note, and the prompt record says why they were not sent.",
    )
    max_image_bytes = models.PositiveIntegerField(
        "largest image (bytes)",
        default=4 * 1024 * 1024,
        validators=[MinValueValidator(1024), MaxValueValidator(16 * 1024 * 1024)],
        help_text="An image larger than this (1 KiB–16 MiB) is not sent: its download stops at this size, and "
        "the prompt record says it was too large.",
    )
    stream_replies = models.BooleanField(
        "stream replies",
        default=True,
        help_text="On: a reply appears after its first sentence and grows as the model writes it (edited about "
        "once a second). Off: the reply is posted once, when it is complete.",
    )
    retention_days = models.PositiveIntegerField(
        default=30, validators=[MinValueValidator(1)], help_text="Prompt records older than this are pruned."
    )
    # The model endpoint (bot.conversation.providers.provider_config), resolved as a whole, never field by field:
    # the server's own (base URL, key and model, which only superusers set; the key is write-only in
    # the admin and never leaves the server for a page, an API answer, a log line or a record), else
    # an operator-approved endpoint by name, else the platform's from the environment.
    llm_provider = models.CharField("LLM provider", max_length=16, choices=LLMProvider.choices, default="", blank=True)
    llm_endpoint = models.CharField(
        "approved LLM endpoint",
        max_length=32,
        blank=True,
        default="",
        help_text="An endpoint the operator approved (LLM_APPROVED_ENDPOINTS); empty = the platform's.",
    )
    llm_fallback_endpoints = models.JSONField(
        "fallback LLM endpoints",
        default=list,
        blank=True,
        help_text="Approved endpoints tried in this order when the endpoint above times out, is unreachable, "
        "or answers 429 (too many requests) or a 5xx error.",
    )
    llm_supports_tools = models.BooleanField(
        "model supports tool calling",
        default=True,
        help_text="Off for a model without tool support (e.g. a small local model): it is sent no tools. A server that "
        "refuses them anyway is asked once more without tools.",
    )
    llm_base_url = models.URLField(blank=True, default="")
    llm_api_key = models.CharField(max_length=256, blank=True, default="")
    llm_model = models.CharField(
        "LLM model",
        max_length=128,
        blank=True,
        default="",
        help_text="The model name sent to the provider, e.g. gpt-4o-mini. Empty = LLM_MODEL from the environment.",
    )
    # The server's own endpoint's limits (bot.conversation.budget); empty: the platform's LLM_CONTEXT_WINDOW and
    # LLM_MAX_REPLY_TOKENS. Approved endpoints have theirs in the environment.
    llm_context_window = models.PositiveIntegerField(
        "LLM context window (tokens)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1024)],
        help_text="How many tokens this server's own model reads at once, prompt and reply together; the prompt "
        "is cut to fit (oldest messages first). Empty = LLM_CONTEXT_WINDOW from the environment.",
    )
    llm_max_reply_tokens = models.PositiveIntegerField(
        "LLM reply budget (tokens)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The longest reply this server's own model may write, kept free in its window. At most half the "
        "window. Empty = LLM_MAX_REPLY_TOKENS from the environment.",
    )
    llm_cache_hints = models.BooleanField(
        "send prompt-cache hints",
        default=False,
        help_text="Marks the prompt's stable start with cache_control, for a provider of this server's own endpoint "
        "that caches only where asked (e.g. Anthropic's OpenAI-compatible API). Others ignore it.",
    )
    llm_input_price = models.DecimalField(
        "price per million input tokens",
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text="What the provider charges for a million prompt tokens of this server's model, in your billing "
        "currency. Prompt records and the server list show each turn's cost from it; empty = cost not shown.",
    )
    llm_output_price = models.DecimalField(
        "price per million output tokens",
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text="What the provider charges for a million reply (completion) tokens, in the same currency.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    # The key is a secret: never in a history row, so never on a history page.
    history = audit_trail(excluded_fields=["llm_api_key"])

    class Meta:
        db_table = "server_settings"
        verbose_name_plural = "server settings"
        constraints = [
            models.CheckConstraint(condition=models.Q(humanizer_degree__lte=3), name="server_settings_humanizer_0_3"),
            models.CheckConstraint(
                condition=models.Q(timezone_offset__gte=-12, timezone_offset__lte=14),
                name="server_settings_timezone_range",
            ),
        ]

    def __str__(self) -> str:
        return f"settings of {self.server}"


class ServerMember(models.Model):
    """A snapshot of one guild member (data-model.md §2.5); presence is never served stale."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="members")
    user_disc_id = models.CharField("Discord user ID", max_length=20, validators=[validate_discord_id])
    display_name = models.CharField(max_length=100, null=True, blank=True)
    nickname = models.CharField(max_length=100, null=True, blank=True)
    global_name = models.CharField(max_length=100, null=True, blank=True)
    username = models.CharField(max_length=100, null=True, blank=True)
    is_bot = models.BooleanField(default=False)
    can_manage_server = models.BooleanField(default=False)
    roles = models.JSONField(default=list, blank=True)
    presence_status = models.CharField(max_length=16, null=True, blank=True)
    activities = models.JSONField(default=list, blank=True)
    fetched_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "server_members"
        constraints = [
            models.UniqueConstraint(fields=["server", "user_disc_id"], name="server_member_unique"),
        ]

    def __str__(self) -> str:
        return self.display_name or self.username or self.user_disc_id


class ServerEmoji(models.Model):
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="emojis")
    emoji_disc_id = models.CharField("emoji Discord ID", max_length=20, validators=[validate_discord_id])
    emoji_name = models.CharField(max_length=64)
    emoji_desc = models.TextField(blank=True, default="")
    emotion_key = models.CharField(max_length=64, null=True, blank=True)
    is_global = models.BooleanField(default=False)
    is_animated = models.BooleanField(default=False)

    class Meta:
        db_table = "server_emojis"
        constraints = [models.UniqueConstraint(fields=["server", "emoji_disc_id"], name="server_emoji_unique")]

    def __str__(self) -> str:
        return f":{self.emoji_name}:"


class ServerSticker(models.Model):
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="stickers")
    sticker_disc_id = models.CharField("sticker Discord ID", max_length=20, validators=[validate_discord_id])
    sticker_name = models.CharField(max_length=64)
    sticker_desc = models.TextField(blank=True, default="")
    emotion_key = models.CharField(max_length=64, null=True, blank=True)
    is_global = models.BooleanField(default=False)
    sticker_format = models.IntegerField(default=1)

    class Meta:
        db_table = "server_stickers"
        constraints = [models.UniqueConstraint(fields=["server", "sticker_disc_id"], name="server_sticker_unique")]

    def __str__(self) -> str:
        return self.sticker_name


class MatrixChannelLink(models.Model):
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="matrix_links")
    channel_disc_id = models.CharField(
        "channel Discord ID", max_length=20, unique=True, validators=[validate_discord_id]
    )
    matrix_room_id = models.CharField(max_length=255, unique=True)

    class Meta:
        db_table = "matrix_channel_links"

    def __str__(self) -> str:
        return f"{self.channel_disc_id} ↔ {self.matrix_room_id}"
