"""Token administration is a CLI command, not an API operation (docs/design.md,
"Principals, credentials and sessions"): `hub principal …` and
`hub token …` work against the configured database, and what they issue works on the API."""

from __future__ import annotations

from tests.support.cli import HubCli
from tests.support.client import Api, GraphQLErrors


def test_operator_creates_a_principal_and_a_token_that_works_on_the_api(
    server: str, cli: HubCli
) -> None:
    created = cli("principal", "create", "builder-1", "--kind", "agent").stdout
    assert "created agent builder-1" in created
    cli("principal", "create", "olga", "--kind", "human", "--operator")
    listed = cli("principal", "list").stdout
    assert "builder-1" in listed
    assert "olga" in listed
    assert "operator" in listed

    issued = cli("token", "create", "builder-1", "--label", "laptop")
    token = issued.stdout.strip()
    assert token.startswith("hub_pat_")
    assert "not shown again" in " ".join(issued.stderr.split())
    assert token not in issued.stderr

    api = Api(server, token)
    try:
        viewer = api("{ viewer { principal { name kind isOperator } credential } }")["viewer"]
    finally:
        api.close()
    assert viewer == {
        "principal": {"name": "builder-1", "kind": "AGENT", "isOperator": False},
        "credential": "PERSONAL",
    }

    tokens = cli("token", "list", "builder-1").stdout
    assert "laptop" in tokens
    assert "active" in tokens
    assert token.split("_")[3] not in tokens


def test_token_list_and_revoke_name_the_token_not_its_secret(server: str, cli: HubCli) -> None:
    cli("principal", "create", "builder-2")
    token = cli("token", "create", "builder-2").stdout.strip()
    token_id = "tok_" + token.split("_")[2]
    assert token_id in cli("token", "list", "builder-2").stdout
    revoked = cli("token", "revoke", token_id).stdout
    assert f"revoked {token_id}" in revoked
    api = Api(server, token)
    try:
        try:
            api("{ viewer { credential } }")
            raise AssertionError("a revoked token authenticated")
        except GraphQLErrors as refused:
            assert refused.codes == ["UNAUTHENTICATED"]
    finally:
        api.close()


def test_cli_refuses_a_duplicate_principal_and_an_unknown_one(cli: HubCli) -> None:
    cli("principal", "create", "twin")
    duplicate = cli("principal", "create", "twin", exit_code=1)
    assert "CONFLICT" in duplicate.stderr
    unknown = cli("token", "create", "nobody", exit_code=1)
    assert "NOT_FOUND" in unknown.stderr
    bad_kind = cli("principal", "create", "robot", "--kind", "robot", exit_code=1)
    assert "VALIDATION_FAILED" in bad_kind.stderr


def test_token_for_a_principal_id_goes_to_that_principal_not_a_namesake(
    server: str, cli: HubCli
) -> None:
    created = cli("principal", "create", "real").stdout
    real_id = created.split("(")[1].split(")")[0]
    assert real_id.startswith("prn_")
    # A principal whose *name* is the other's id must not receive its tokens.
    cli("principal", "create", real_id)
    token = cli("token", "create", real_id).stdout.strip()
    api = Api(server, token)
    try:
        principal = api("{ viewer { principal { id name } } }")["viewer"]["principal"]
    finally:
        api.close()
    assert principal == {"id": real_id, "name": "real"}
