# Tomori Platform: one image for every process (web, bot, worker, beat, migrate); compose.yaml picks
# the role with bin/tomori. Build: docker build -t tomori-platform . (docs/deploy.md).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# The locked requirements first, in a layer of their own, so a code change does not reinstall them.
COPY requirements.lock /tmp/requirements.lock
RUN python -m venv /opt/venv && pip install -r /tmp/requirements.lock

WORKDIR /app
COPY . /app

# A system account without a login shell or a home of its own; it owns only the folders it writes:
# the uploads (TOMORI_VAR_DIR), the collected static files (STATIC_ROOT) and the metrics folder.
RUN useradd --system --uid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin tomori \
    && mkdir -p /var/lib/tomori /srv/static /run/tomori-metrics \
    && chown tomori:tomori /var/lib/tomori /srv/static /run/tomori-metrics
USER tomori

EXPOSE 8000
ENTRYPOINT ["bin/tomori"]
CMD ["web"]
