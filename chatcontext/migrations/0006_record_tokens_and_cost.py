"""Input/output tokens and cost on each prompt record (issue 16, item 4).

Records stored before get their tokens from what they kept: the provider's reported usage where
there is one, else the stored estimate of the prompt and of the reply. Their cost stays unknown:
no price was set when they were written.
"""

from django.db import migrations, models

BATCH = 500


def backfill_tokens(apps, schema_editor):
    from chatcontext.core.tokens import estimate_tokens
    from chatcontext.core.usage import turn_tokens

    PromptRecord = apps.get_model("chatcontext", "PromptRecord")
    rows = PromptRecord.objects.order_by("pk").only("pk", "usage", "token_estimate", "reply_text")
    changed = []
    for record in rows.iterator(chunk_size=BATCH):
        tokens = turn_tokens(
            record.usage if isinstance(record.usage, dict) else {},
            prompt_estimate=record.token_estimate,
            reply_estimate=estimate_tokens(record.reply_text),
        )
        record.input_tokens, record.output_tokens, record.tokens_measured = tokens.input, tokens.output, tokens.measured
        changed.append(record)
        if len(changed) >= BATCH:
            PromptRecord.objects.bulk_update(changed, ["input_tokens", "output_tokens", "tokens_measured"])
            changed = []
    PromptRecord.objects.bulk_update(changed, ["input_tokens", "output_tokens", "tokens_measured"])


class Migration(migrations.Migration):
    dependencies = [("chatcontext", "0005_promptrecord_tool_calls")]

    operations = [
        migrations.AddField(
            model_name="promptrecord",
            name="cost",
            field=models.DecimalField(blank=True, decimal_places=6, max_digits=14, null=True),
        ),
        migrations.AddField(
            model_name="promptrecord",
            name="input_tokens",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="promptrecord",
            name="output_tokens",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="promptrecord",
            name="tokens_measured",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(backfill_tokens, migrations.RunPython.noop, elidable=True),
    ]
