"""Cross-project integrity is enforced by the database itself, not only by the service
(docs/design.md, "Project boundaries")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from hub.storage.database import Database
from tests.conftest import raw_sql
from tests.support.sql import fetch_value

INSERT_ALIAS = (
    "INSERT INTO project_aliases (project_id, alias, repository_id, created_at)"
    " VALUES (:project_id, :alias, :repository_id, :created_at)"
)


def test_alias_of_project_a_cannot_point_at_a_repository_of_project_b(
    database: Database,
    create_project: Callable[..., dict[str, Any]],
    add_repository: Callable[..., dict[str, Any]],
) -> None:
    a = create_project("A")
    b = create_project("B")
    repo_a = add_repository(a["id"], "https://github.com/acme/a")["repository"]
    repo_b = add_repository(b["id"], "https://github.com/acme/b")["repository"]
    now = datetime.now(UTC)

    with pytest.raises(IntegrityError):
        raw_sql(
            database,
            INSERT_ALIAS,
            project_id=a["id"],
            alias="sneaky",
            repository_id=repo_b["id"],
            created_at=now,
        )
    assert fetch_value(database, "SELECT count(*) FROM project_aliases WHERE alias = 'sneaky'") == 0

    # The same row pointing at the project's own repository is accepted.
    raw_sql(
        database,
        INSERT_ALIAS,
        project_id=a["id"],
        alias="own",
        repository_id=repo_a["id"],
        created_at=now,
    )
    assert fetch_value(database, "SELECT count(*) FROM project_aliases WHERE alias = 'own'") == 1


def test_alias_of_an_unknown_project_or_repository_is_refused(
    database: Database, create_project: Callable[..., dict[str, Any]]
) -> None:
    a = create_project("A")
    now = datetime.now(UTC)
    with pytest.raises(IntegrityError):
        raw_sql(
            database,
            INSERT_ALIAS,
            project_id="prj_missing",
            alias="x",
            repository_id=None,
            created_at=now,
        )
    with pytest.raises(IntegrityError):
        raw_sql(
            database,
            INSERT_ALIAS,
            project_id=a["id"],
            alias="y",
            repository_id="repo_missing",
            created_at=now,
        )
