"""Requests per second and p50/p99 latency of the prompt-record API on PostgreSQL with 10,000 records.

Creates a scratch database next to ``--database-url`` (Django's test-database machinery: the name
gets a ``test_`` prefix; it is dropped afterwards, also on failure), migrates it, stores one real
prompt record (the project's example turn assembled by ``replay_snapshot`` and written by
``record_turn``) and bulk-creates ``--records`` copies of it on the token's server, spread
over channels, personas and two days, plus a tenth as many on a second server the token must not
see. Requests go through Django's test client in this process (middleware, django-ninja, bearer
token auth, JSON rendering), one at a time, with DEBUG off; pages are read at random offsets and
records at random ids. Each figure is over ``--requests`` requests after a warm-up.

Reported: list endpoint at page sizes 10/50/200 (and its SQL query count per page, which must not
grow with the page size) and the detail endpoint.

    .venv/bin/python bench/api.py [--records 10000] [--requests 300]
        [--database-url postgres://postgres@127.0.0.1:5432/tomori_bench]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/tomori_bench"
PAGE_SIZES = (10, 50, 200)
CHANNELS = 20
SEED = 20251202
SNAPSHOT = ROOT / "examples" / "tidepool-workbench.snapshot.json"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000, help="records on the token's server (default 10000)")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per figure (default 300)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL),
        help=f"server and base name of the scratch database (default {DEFAULT_DATABASE_URL})",
    )
    return parser.parse_args()


ARGS = _arguments()
# Before Django reads its settings: production-like flags, the scratch database's server, no Redis.
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "botplatform.settings",
        "DEBUG": "0",
        "DATABASE_URL": ARGS.database_url,
        "REDIS_URL": "",
        "LOG_LEVEL": "ERROR",
    }
)
os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_urlsafe(32))

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from chatcontext.models import PromptRecord  # noqa: E402
from chatcontext.records.store import TurnRecord, record_turn  # noqa: E402
from chatcontext.replay import replay_snapshot  # noqa: E402
from chatcontext.snapshot import load_snapshot_json  # noqa: E402
from personas.models import ApiToken, Persona, Server  # noqa: E402


@contextmanager
def scratch_database() -> Iterator[str]:
    original = connection.settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield name
    finally:
        connection.creation.destroy_test_db(original, verbosity=0)


def populate(records: int) -> tuple[str, list[int]]:
    """The servers, a read token of server A, and the records; returns the raw token and A's record ids."""
    doc = load_snapshot_json(SNAPSHOT.read_bytes())
    server_a = Server.objects.create(server_disc_id=doc["server"]["disc_id"], name=doc["server"]["name"])
    server_b = Server.objects.create(server_disc_id="4300", name="Other server")
    personas = [
        Persona.objects.create(server=server_a, persona_nickname=name, is_alter=alter)
        for name, alter in (("Tomori", False), ("Sprocket", True), ("Mori", True))
    ]
    persona_b = Persona.objects.create(server=server_b, persona_nickname="Tomori")
    model = record_turn(TurnRecord(replay_snapshot(doc, transcriber=None), snapshot=doc, source="replay"))
    values = {f.attname: getattr(model, f.attname) for f in PromptRecord._meta.concrete_fields if not f.primary_key}
    start = timezone.now() - timedelta(days=2)

    def copies(server: Server, count: int, persona_pool: list[Persona]) -> Iterator[PromptRecord]:
        for i in range(count):
            persona = persona_pool[i % len(persona_pool)]
            yield PromptRecord(
                **{
                    **values,
                    "server_id": server.pk,
                    "channel_disc_id": str(4200 + i % CHANNELS),
                    "channel_name": f"channel-{i % CHANNELS}",
                    "persona_id": persona.pk,
                    "persona_nickname": persona.persona_nickname,
                    "created_at": start + timedelta(seconds=i * 17),
                    "latency_ms": 300 + i % 900,
                    "error": "provider timeout" if i % 50 == 0 else "",
                }
            )

    PromptRecord.objects.bulk_create(copies(server_a, records - 1, personas), batch_size=500)
    PromptRecord.objects.bulk_create(copies(server_b, records // 10, [persona_b]), batch_size=500)
    _, raw = ApiToken.issue(server_a, "bench", ApiToken.Scope.READ)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # fresh statistics, as autovacuum would have them on a live database
    return raw, list(PromptRecord.objects.filter(server=server_a).values_list("pk", flat=True))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def timed(get: Callable[[], int], requests: int) -> tuple[float, float, float]:
    """(requests per second, p50 ms, p99 ms) of ``requests`` sequential requests after 10 warm-ups."""
    for _ in range(10):
        get()
    durations = []
    for _ in range(requests):
        started = time.perf_counter()
        status = get()
        durations.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"unexpected HTTP {status}")
    return len(durations) / sum(durations), statistics.median(durations) * 1000, percentile(durations, 0.99) * 1000


def main() -> None:
    rng = random.Random(SEED)
    with scratch_database() as name:
        print(f"scratch database {name} on {connection.vendor}; creating {ARGS.records:,} records ...", flush=True)
        raw, ids = populate(ARGS.records)
        client = Client(headers={"Authorization": f"Bearer {raw}"})
        total = len(ids)
        client.get("/api/v1/records?limit=1")  # the first use of a token stamps last_used_at: not counted below
        print(f"{total:,} records on the token's server, {ARGS.requests} timed requests per row, one client\n")
        print(f"{'endpoint':<28} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'queries':>8}")
        for limit in PAGE_SIZES:

            def get_page(limit: int = limit) -> int:
                offset = rng.randrange(0, max(1, total - limit))
                return client.get(f"/api/v1/records?limit={limit}&offset={offset}").status_code

            with CaptureQueriesContext(connection) as queries:
                get_page()
            count = len(queries.captured_queries)  # read now: later requests reset the query log
            rps, p50, p99 = timed(get_page, ARGS.requests)
            label = f"GET /records?limit={limit}"
            print(f"{label:<28} {rps:>8.1f} {p50:>8.2f} {p99:>8.2f} {count:>8}")

        def get_record() -> int:
            return client.get(f"/api/v1/records/{rng.choice(ids)}").status_code

        with CaptureQueriesContext(connection) as queries:
            get_record()
        count = len(queries.captured_queries)
        rps, p50, p99 = timed(get_record, ARGS.requests)
        print(f"{'GET /records/{id}':<28} {rps:>8.1f} {p50:>8.2f} {p99:>8.2f} {count:>8}")


if __name__ == "__main__":
    main()
