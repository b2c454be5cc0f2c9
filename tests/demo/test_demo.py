"""`hub demo` (what `make run` prints) is idempotent in effect: a second run prints the
same working credentials and issues no token; `--reset` replaces them and revokes the
old ones. The agent gets its own token, so agent work is not the human operator's."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from typer.testing import Result

from tests.support.cli import HubCli
from tests.support.client import Api, GraphQLErrors
from tests.web.conftest import Dashboard

CREDENTIALS = Path("var") / "demo-credentials"  # relative to the CLI's working directory


@dataclass(frozen=True)
class Printed:
    dashboard: str
    password: str
    operator_token: str
    agent_token: str
    closing: str


def printed(result: Result) -> Printed:
    lines = [line.strip() for line in result.stdout.splitlines()]

    def value(label: str) -> str:
        found = [line.removeprefix(label).strip() for line in lines if line.startswith(label)]
        assert len(found) == 1, (label, result.stdout)
        return found[0]

    return Printed(
        dashboard=value("dashboard"),
        password=value("password"),
        operator_token=value("API token"),
        agent_token=value("agent token"),
        closing=next(line for line in lines if line.startswith(("issued", "unchanged since"))),
    )


def viewer(server: str, token: str) -> dict[str, str]:
    api = Api(server, token)
    try:
        principal: dict[str, str] = api("{ viewer { principal { name kind } } }")["viewer"][
            "principal"
        ]
        return principal
    finally:
        api.close()


def refused(server: str, token: str) -> bool:
    try:
        viewer(server, token)
    except GraphQLErrors as error:
        return error.codes == ["UNAUTHENTICATED"]
    return False


def signs_in(server: str, password: str) -> bool:
    browser = Dashboard(server)
    try:
        return browser.login("demo", password).status_code == 303
    finally:
        browser.close()


def active_tokens(cli: HubCli, principal: str) -> int:
    return sum(" active " in line for line in cli("token", "list", principal).stdout.splitlines())


def test_a_second_run_prints_the_same_credentials_and_they_still_work(
    server: str, cli: HubCli
) -> None:
    first = printed(cli("demo"))
    assert first.operator_token.startswith("hub_pat_")
    assert first.agent_token.startswith("hub_pat_")
    assert first.operator_token != first.agent_token
    assert first.closing.startswith("issued now")

    second = printed(cli("demo"))
    assert (second.password, second.operator_token, second.agent_token) == (
        first.password, first.operator_token, first.agent_token,
    )
    assert second.closing.startswith("unchanged since the first run")

    assert signs_in(server, first.password)
    assert viewer(server, first.operator_token) == {"name": "demo", "kind": "HUMAN"}
    # The agent token is the agent's: work done with it is not the human operator's.
    assert viewer(server, first.agent_token) == {"name": "demo-agent", "kind": "AGENT"}
    assert active_tokens(cli, "demo") == 1
    assert active_tokens(cli, "demo-agent") == 1


def test_the_credentials_file_is_readable_by_its_owner_only(cli: HubCli) -> None:
    first = printed(cli("demo"))
    mode = stat.S_IMODE(CREDENTIALS.stat().st_mode)
    assert mode == 0o600, oct(mode)
    text = CREDENTIALS.read_text()
    assert f"DEMO_AGENT_TOKEN={first.agent_token}" in text
    assert f"DEMO_PASSWORD={first.password}" in text


def test_reset_issues_new_credentials_and_revokes_the_old_tokens(
    server: str, cli: HubCli
) -> None:
    first = printed(cli("demo"))
    reset = printed(cli("demo", "--reset"))
    assert reset.password != first.password
    assert reset.operator_token != first.operator_token
    assert reset.agent_token != first.agent_token
    assert "2 old demo tokens revoked" in reset.closing

    assert refused(server, first.operator_token)
    assert refused(server, first.agent_token)
    assert not signs_in(server, first.password)
    assert signs_in(server, reset.password)
    assert viewer(server, reset.agent_token)["name"] == "demo-agent"
    assert active_tokens(cli, "demo") == 1
    assert active_tokens(cli, "demo-agent") == 1
    # And the next plain run keeps the reset's credentials.
    assert printed(cli("demo")).agent_token == reset.agent_token


def test_without_the_credentials_file_a_run_changes_nothing_and_says_so(
    server: str, cli: HubCli
) -> None:
    first = printed(cli("demo"))
    CREDENTIALS.unlink()
    again = printed(cli("demo"))
    assert again.password.startswith("unchanged")
    assert again.agent_token.startswith("unchanged")
    assert "hub demo --reset" in again.closing
    assert signs_in(server, first.password)
    assert viewer(server, first.agent_token)["name"] == "demo-agent"
    assert active_tokens(cli, "demo") == 1
    assert active_tokens(cli, "demo-agent") == 1


def test_a_stale_credentials_file_is_not_believed(server: str, cli: HubCli) -> None:
    """A file from another database (or with a revoked token) is checked, not trusted."""
    first = printed(cli("demo"))
    token_id = "tok_" + first.agent_token.split("_")[2]
    cli("token", "revoke", token_id)
    again = printed(cli("demo"))
    # The revoked token is not printed as working: a new one replaces it.
    assert again.agent_token != first.agent_token
    assert viewer(server, again.agent_token)["name"] == "demo-agent"
    assert again.operator_token == first.operator_token
    assert active_tokens(cli, "demo-agent") == 1


def test_the_banner_shows_the_port_it_is_given(cli: HubCli) -> None:
    assert printed(cli("demo", "--port", "8100")).dashboard == "http://127.0.0.1:8100/"
    assert (
        printed(cli("demo", "--host", "0.0.0.0", "--port", "9000")).dashboard
        == "http://127.0.0.1:9000/"
    )
