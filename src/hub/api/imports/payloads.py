"""Payloads of the imports mutation, and its result union."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.imports.types import ImportReport
from hub.api.problems import result_union
from hub.imports import service as imports


@strawberry.type
class ImportTasksPayload:
    report: ImportReport
    replay: bool = strawberry.field(description="A keyed retry: the first import's report.")
    server_time: datetime


ImportTasksResult = result_union("ImportTasksResult", ImportTasksPayload, imports.import_tasks)
