"""Every module's tables, imported so that `Base.metadata` is complete.

Alembic's env, `create_all` in tests and the drift check import this module; the
modules themselves never import each other's tables.
"""

from hub.artifacts import tables as artifacts_tables
from hub.events import tables as events_tables
from hub.idempotency import tables as idempotency_tables
from hub.identity import tables as identity_tables
from hub.imports import tables as imports_tables
from hub.integration import tables as integration_tables
from hub.jobs import tables as jobs_tables
from hub.knowledge import tables as knowledge_tables
from hub.projects import tables as projects_tables
from hub.resources import tables as resources_tables
from hub.review import tables as review_tables
from hub.storage.base import Base
from hub.work import tables as work_tables

metadata = Base.metadata

__all__ = [
    "artifacts_tables",
    "events_tables",
    "idempotency_tables",
    "identity_tables",
    "imports_tables",
    "integration_tables",
    "jobs_tables",
    "knowledge_tables",
    "metadata",
    "projects_tables",
    "resources_tables",
    "review_tables",
    "work_tables",
]
