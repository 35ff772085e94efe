"""The playground's stored channels (issue 8): a real chat channel without Discord.

A playground channel behaves like a Discord text channel of its server: messages have snowflake-like
ids, history, replies, reactions and attachments, and personas answer through the same admission,
planning, Build Context and record path as on Discord (``bot.playground``). Ids come from one
counter (``PlaygroundSequence``) laid out like Discord snowflakes (milliseconds since Discord's
epoch in the high bits), so they are digits, sort by time and never collide with each other.
"""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models import F, Q

DISCORD_EPOCH_MS = 1_420_070_400_000
SEQUENCE_BITS = 22
SNOWFLAKE_SEQUENCE = "snowflake"


class PlaygroundSequence(models.Model):
    """A named counter; ``allocate_snowflakes`` draws from it."""

    name = models.CharField(max_length=32, primary_key=True)
    value = models.BigIntegerField(default=0)

    class Meta:
        db_table = "playground_sequences"

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


def allocate_snowflakes(count: int, now_ms: int) -> list[str]:
    """``count`` new ids: the counter's next values in the low 22 bits, ``now_ms`` above them.

    The counter is advanced with one UPDATE, which holds the row lock until the transaction ends, so
    concurrent callers on PostgreSQL draw disjoint ranges.
    """
    with transaction.atomic():
        if not PlaygroundSequence.objects.filter(name=SNOWFLAKE_SEQUENCE).exists():
            try:
                with transaction.atomic():
                    PlaygroundSequence.objects.create(name=SNOWFLAKE_SEQUENCE)
            except IntegrityError:  # another process created it first
                pass
        PlaygroundSequence.objects.filter(name=SNOWFLAKE_SEQUENCE).update(value=F("value") + count)
        last = PlaygroundSequence.objects.values_list("value", flat=True).get(name=SNOWFLAKE_SEQUENCE)
    stamp = max(0, now_ms - DISCORD_EPOCH_MS) << SEQUENCE_BITS
    mask = (1 << SEQUENCE_BITS) - 1
    return [str(stamp | (n & mask)) for n in range(last - count + 1, last + 1)]


class PlaygroundChannel(models.Model):
    """A text channel of a server that lives in this database instead of on Discord."""

    server = models.ForeignKey("personas.Server", on_delete=models.CASCADE, related_name="playground_channels")
    disc_id = models.CharField(max_length=20, unique=True)
    # Alters speak through a channel webhook on Discord; here through this id (issue 6 delivery).
    webhook_disc_id = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    topic = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "playground_channels"
        ordering = ["server_id", "name", "id"]

    def __str__(self) -> str:
        return f"#{self.name}"


class PlaygroundMessage(models.Model):
    """One message of a playground channel, as Discord would hold it.

    A person's message stores only their id: names are read from the server's members when the
    channel is read, as Discord does. A persona's reply stores the persona and, for an alter, the
    channel webhook it spoke through with the persona's name as the webhook's username.
    """

    channel = models.ForeignKey(PlaygroundChannel, on_delete=models.CASCADE, related_name="messages")
    disc_id = models.CharField(max_length=20, unique=True)
    author_disc_id = models.CharField(max_length=20, db_index=True)
    author_name = models.CharField(max_length=100, blank=True, default="")
    persona = models.ForeignKey(
        "personas.Persona", on_delete=models.SET_NULL, null=True, blank=True, related_name="playground_messages"
    )
    webhook_disc_id = models.CharField(max_length=20, blank=True, default="")
    is_bot = models.BooleanField(default=False)
    content = models.TextField(blank=True, default="")
    created_at_ms = models.BigIntegerField()
    reply_to = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replies")
    # [{"emoji": "👍", "users": ["<disc id>", ...]}]
    reactions = models.JSONField(default=list, blank=True)
    # [{"id", "name", "content_type", "size", "path"}]; path is relative to the upload directory.
    attachments = models.JSONField(default=list, blank=True)
    # The notices a persona posts with a message (a memory learned, a reminder set), as Discord embeds:
    # [{"title", "description", "footer_text", "color"}].
    embeds = models.JSONField(default=list, blank=True)
    # Why no persona answered it (a Skip value or queue_full) and why its audio has no transcript (a
    # FailureReason value or privacy_full): kept so the page shows the note again after a reload
    # (bot.playground.notes words them). Discord shows neither; only the playground explains.
    skip_reason = models.CharField(max_length=32, blank=True, default="")
    transcription_failure = models.CharField(max_length=32, blank=True, default="")
    # A person's message the platform has neither answered nor noted yet: set when it is stored,
    # cleared when its turn is done or its skip noted. One still set when a web process starts was
    # in flight in a process that died (``store.note_interrupted_turns``).
    turn_pending = models.BooleanField(default=False)

    class Meta:
        db_table = "playground_messages"
        ordering = ["created_at_ms", "id"]
        indexes = [
            models.Index(fields=["channel", "-created_at_ms"], name="pgmsg_channel_recent"),
            models.Index(fields=["turn_pending"], condition=Q(turn_pending=True), name="pgmsg_turn_pending"),
        ]

    def __str__(self) -> str:
        return f"message {self.disc_id}"
