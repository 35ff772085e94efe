"""Settings come from the environment; a production-like start without SECRET_KEY is refused, and a
development start keeps one generated key in var/ (issue 16: sessions survive a restart)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT as ROOT

PROBE = (
    "import django, hashlib; django.setup(); from django.conf import settings; "
    "print(settings.SECRET_KEY[:4], hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest())"
)


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c PROBE``, or ``python *args`` when given, in a clean environment plus ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL"}}
    base.update(DJANGO_SETTINGS_MODULE="botplatform.settings", TOMORI_VAR_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, *(args or ("-c", PROBE))],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_secret_key_required_when_debug_is_off(tmp_path: Path) -> None:
    result = _run(tmp_path, DEBUG="0")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY must be set" in result.stderr


def test_secret_key_from_environment_when_debug_is_off(tmp_path: Path) -> None:
    result = _run(tmp_path, DEBUG="0", SECRET_KEY="prod-key-from-env")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "prod"
    assert not (tmp_path / "secret_key").exists()


def test_generated_development_key_is_kept_in_var_with_owner_only_permissions(tmp_path: Path) -> None:
    first, second = _run(tmp_path), _run(tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    prefix, digest = first.stdout.split()
    assert prefix == "dev-"
    assert second.stdout.split()[1] == digest  # the same key after a restart: sessions stay valid
    key_file = tmp_path / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert hashlib.sha256(key.encode()).hexdigest() == digest
    assert key not in first.stdout + first.stderr + second.stdout + second.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".secret_key")] == []


def test_an_empty_key_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "secret_key").write_text("")
    result = _run(tmp_path)
    assert result.returncode != 0
    assert "is empty: delete it" in result.stderr


def test_approved_endpoints_come_whole_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from botplatform.settings import LLM_CONTEXT_WINDOW, LLM_MAX_REPLY_TOKENS, approved_endpoints

    monkeypatch.setenv("LLM_ENDPOINT_LOCAL_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_BASE_URL", "https://fast.example/v1")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_API_KEY", "sk-fast")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_MODEL", "small")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_CONTEXT_WINDOW", "32768")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_MAX_REPLY_TOKENS", "2048")
    monkeypatch.setenv("LLM_ENDPOINT_FAST_LANE_CACHE_HINTS", "1")
    platform = {"context_window": LLM_CONTEXT_WINDOW, "max_reply_tokens": LLM_MAX_REPLY_TOKENS}
    local = {"base_url": "http://127.0.0.1:11434/v1", "api_key": "", "model": ""}
    assert approved_endpoints(" local, fast-lane ,") == {
        "local": {**local, **platform, "cache_hints": False},
        "fast-lane": {
            "base_url": "https://fast.example/v1",
            "api_key": "sk-fast",
            "model": "small",
            "context_window": 32768,
            "max_reply_tokens": 2048,
            "cache_hints": True,
        },
    }
    assert approved_endpoints("") == {}


@pytest.mark.parametrize("names", ["Local", "has space", "missing-url", "a" * 33])
def test_a_bad_approved_endpoint_refuses_to_start(names: str) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from botplatform.settings import approved_endpoints

    with pytest.raises(ImproperlyConfigured):
        approved_endpoints(names)


@pytest.mark.parametrize("url", ["localhost:8080/v1", "ftp://llm.example/v1", "http://", "127.0.0.1:8080"])
def test_an_llm_base_url_that_is_not_http_is_refused_in_one_line_naming_it(tmp_path: Path, url: str) -> None:
    result = _run(tmp_path, "manage.py", "check", LLM_BASE_URL=url)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "Configuration error: LLM_BASE_URL is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)"
    ]


def test_an_approved_endpoint_url_must_be_http_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from django.core.exceptions import ImproperlyConfigured

    from botplatform.settings import approved_endpoints

    monkeypatch.setenv("LLM_ENDPOINT_LOCAL_BASE_URL", "127.0.0.1:11434/v1")
    with pytest.raises(ImproperlyConfigured, match="LLM_ENDPOINT_LOCAL_BASE_URL is not an http"):
        approved_endpoints("local")


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("MAX_MEMORY_LENGTH", "1k", "is not a whole number"),
        ("LLM_MAX_REPLY_TOKENS", "0", "is below its minimum of 1"),
        ("REACTION_CONTEXT_ENABLED", "maybe", "is not one of 1/0, true/false, yes/no, on/off"),
        ("PARTICIPANT_SOURCE_TIMEOUT_MS", "soon", "is not a whole number"),
        ("PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS", "nan", "is not a positive number of seconds"),
    ],
)
def test_a_malformed_value_refuses_the_start_in_one_line_naming_it(
    tmp_path: Path, variable: str, value: str, says: str
) -> None:
    """Issue 28 item 6: a typo is never a silent default."""
    result = _run(tmp_path, "manage.py", "check", **{variable: value})

    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"Configuration error: {variable}={value!r} {says}"]
