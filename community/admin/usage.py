"""Turns, tokens and cost per server over the last day and week, for the admin's server list.

Shown on the server list by ``community.admin.servers``: personas cannot read prompt records
itself. A turn that got no answer is no turn here. Each figure is a
correlated subquery on the records' (server, created_at) index, so the list page stays one query
whatever the number of servers.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.db.models import Count, DecimalField, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from chatcontext.models import PromptRecord
from personas.models import Server

PERIODS = {"day": timedelta(days=1), "week": timedelta(days=7)}


# Turns that got no answer (``usage.got_no_answer``) are left out of every figure.
ANSWERED = ~Q(error__gt="", reply_text="")


def _figure(since: Any, aggregate: Any, output_field: Any) -> Subquery:
    recent = PromptRecord.objects.filter(ANSWERED, server=OuterRef("pk"), created_at__gte=since).order_by()
    return Subquery(recent.values("server").annotate(figure=aggregate).values("figure")[:1], output_field=output_field)


def annotate_usage(queryset: QuerySet[Server]) -> QuerySet[Server]:
    now = timezone.now()
    figures: dict[str, Any] = {}
    for period, span in PERIODS.items():
        since = now - span
        figures[f"usage_{period}_turns"] = _figure(since, Count("pk"), IntegerField())
        figures[f"usage_{period}_tokens"] = _figure(since, Sum(F("input_tokens") + F("output_tokens")), IntegerField())
        figures[f"usage_{period}_cost"] = _figure(since, Sum("cost"), DecimalField(max_digits=20, decimal_places=6))
    return queryset.annotate(**figures)


def usage_lines(turns: int | None, tokens: int | None, cost: Decimal | None) -> list[str]:
    """``["3 turns", "1,204 tokens", "cost 0.0012"]``; the cost sums the priced turns, "not
    priced" when no turn of the period had a price."""
    if not turns:
        return ["no turns"]
    priced = f"cost {cost.normalize():f}" if cost is not None else "not priced"
    return [f"{turns} turn{'s' if turns != 1 else ''}", f"{tokens or 0:,} tokens", priced]


def _column(period: str) -> Any:
    @admin.display(description=f"last {period}")
    def column(server: Server) -> str:
        figures = (getattr(server, f"usage_{period}_{k}", None) for k in ("turns", "tokens", "cost"))
        # One figure a line: both periods side by side still fit the list in a laptop's window.
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in usage_lines(*figures)))

    column.__name__ = f"usage_{period}"  # the column's CSS class
    return column


USAGE_COLUMNS = tuple(_column(p) for p in PERIODS)
