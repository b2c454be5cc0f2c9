"""Invalid settings stop the process at start with one line naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.settings import Settings, SettingsError, load_settings
from tests.support.cli import HubCli

INVALID = {
    "HUB_LEASE_SECONDS": "-5",
    "HUB_DATABASE_URL": "mysql://x",
    "HUB_HEARTBEAT_SECONDS": "900",  # not shorter than the default 600 s lease
    "HUB_SQLITE_SYNCHRONOUS": "OFF",
    "HUB_SQLITE_BUSY_TIMEOUT_MS": "soon",
    "HUB_ENVIRONMENT": "staging",
    "HUB_MAX_QUERY_DEPTH": "999",
    "HUB_ARTIFACT_STORE": "ftp",
    "HUB_S3_ENDPOINT_URL": "minio.internal:9000",
    "HUB_S3_PREFIX": "hub/../other",
}


def refusal(name: str) -> str:
    """The one-line message with which loading the settings refuses `name`."""
    with pytest.raises(SettingsError) as refused:
        load_settings()
    message = str(refused.value)
    assert message.startswith(f"invalid setting {name}: "), message
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("name", "value"), INVALID.items(), ids=list(INVALID))
def test_invalid_setting_fails_with_one_line_naming_it(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    message = refusal(name)
    assert value not in message or name == "HUB_HEARTBEAT_SECONDS"  # never echo the input


@pytest.mark.parametrize(
    "url",
    ["sqlite://", "sqlite:///:memory:", "postgresql://hub:hunter2-pw@db:notaport/hub"],
    ids=["sqlite-no-file", "sqlite-memory", "postgresql-bad-port"],
)
def test_unusable_database_url_is_refused_without_echoing_it(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("HUB_DATABASE_URL", url)
    with pytest.raises(SettingsError) as refused:
        load_settings()
    message = str(refused.value)
    assert message.startswith("invalid setting HUB_DATABASE_URL: "), message
    assert "hunter2" not in message


def test_heartbeat_is_checked_against_the_configured_lease(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUB_LEASE_SECONDS", "120")
    monkeypatch.setenv("HUB_HEARTBEAT_SECONDS", "120")
    with pytest.raises(SettingsError, match=r"^invalid setting HUB_HEARTBEAT_SECONDS: "):
        load_settings()
    monkeypatch.setenv("HUB_HEARTBEAT_SECONDS", "30")
    assert load_settings().heartbeat_seconds == 30


def test_defaults_follow_the_design(clean_environment: None) -> None:
    """The defaults of docs/design.md ("Defaults") and the README's configuration table."""
    settings = load_settings()
    assert settings.lease_seconds == 600
    assert settings.heartbeat_seconds == 60
    assert settings.max_watch_window_seconds == 3600
    assert settings.stale_progress_seconds == 900
    assert settings.review_wait_warning_seconds == 86400
    assert settings.sqlite_synchronous == "FULL"
    assert settings.database_url.startswith("sqlite:///")
    assert settings.web_idle_timeout_seconds == 3600
    assert settings.web_session_max_age_seconds == 12 * 3600
    assert settings.credential_recheck_seconds == 5.0


def test_dotenv_file_is_read_and_environment_wins(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path(".env").write_text("HUB_LEASE_SECONDS=900\nHUB_HEARTBEAT_SECONDS=90\n")
    assert load_settings().lease_seconds == 900
    monkeypatch.setenv("HUB_LEASE_SECONDS", "1200")
    settings = load_settings()
    assert (settings.lease_seconds, settings.heartbeat_seconds) == (1200, 90)
    assert isinstance(settings, Settings)


def test_cli_reports_an_invalid_setting_in_one_line_and_exits_2(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HUB_DATABASE_URL", f"sqlite:///{tmp_path / 'hub.db'}")
    monkeypatch.setenv("HUB_HEARTBEAT_SECONDS", "900")
    result = HubCli()("principal", "list", exit_code=2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("invalid setting HUB_HEARTBEAT_SECONDS: ")


@pytest.mark.parametrize(
    ("environment", "name"),
    [
        ({"HUB_ARTIFACT_STORE": "s3"}, "HUB_S3_BUCKET"),
        ({"HUB_ARTIFACT_STORE": "s3", "HUB_S3_BUCKET": ""}, "HUB_S3_BUCKET"),
        ({"HUB_S3_ACCESS_KEY_ID": "AKIA-EXAMPLE"}, "HUB_S3_SECRET_ACCESS_KEY"),
        ({"HUB_S3_SECRET_ACCESS_KEY": "hunter2-secret"}, "HUB_S3_SECRET_ACCESS_KEY"),
    ],
    ids=["s3-without-bucket", "empty-bucket", "key-without-secret", "secret-without-key"],
)
def test_s3_settings_that_go_together_are_checked_at_start(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], name: str
) -> None:
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    assert "hunter2" not in refusal(name)


def test_s3_settings_select_the_s3_store_and_keep_the_secret(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hub.artifacts._s3 import S3Store
    from hub.artifacts._store import FilesystemStore, store_for

    assert isinstance(store_for(load_settings()), FilesystemStore)
    for variable, value in {
        "HUB_ARTIFACT_STORE": "s3",
        "HUB_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "HUB_S3_BUCKET": "artifacts",
        "HUB_S3_PREFIX": "/hub/prod/",
        "HUB_S3_ACCESS_KEY_ID": "AKIA-EXAMPLE",
        "HUB_S3_SECRET_ACCESS_KEY": "hunter2-secret",
    }.items():
        monkeypatch.setenv(variable, value)
    settings = load_settings()
    assert settings.s3_prefix == "hub/prod"
    store = store_for(settings)
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix) == ("artifacts", "hub/prod")
    assert "hunter2" not in repr(settings) + str(settings) + repr(store)
