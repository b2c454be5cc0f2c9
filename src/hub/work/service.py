"""The work module's operations, as other modules and the entry points call them."""

from collections.abc import Iterator

from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.identity.views import Actor
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work import _recovery as recovery
from hub.work import tables
from hub.work._attention import (
    count_attempts_by_state,
    count_leases_expiring,
    count_recovery_candidates,
    recovery_candidates,
    task_counts,
)
from hub.work._authority import (
    HOLDING,
    get_attempt,
    get_attempts,
    hold_attempt,
    own_live_attempt,
    require_own_attempt,
)
from hub.work._board import DONE_RECENTLY as BOARD_DONE_RECENTLY
from hub.work._board import PER_PAGE as BOARD_PER_PAGE
from hub.work._board import TEXT_MATCHES as BOARD_TEXT_MATCHES
from hub.work._board import (
    BoardQuery,
    board_card,
    board_page,
    board_text_terms,
    tasks_waiting_on,
)
from hub.work._briefs import TaskBrief, lock_tasks, tasks_by_source
from hub.work._bulk import Closure, PlannedTask, Ref, create_tasks, find_cycle
from hub.work._bulk_edits import PlannedEdit, edit_tasks
from hub.work._claims import ClaimRequest, claim_recovery, claim_task
from hub.work._closing import (
    MAX_CLOSE_NOTE,
    MAX_REOPEN_CONDITION,
    close_task,
    link_tasks,
    reopen_task,
)
from hub.work._family import (
    children_of,
    criteria_history,
    dependents_of,
    project_graph,
    task_neighbourhood,
)
from hub.work._independence import Reviewer, require_independent
from hub.work._invariants import OpenAttempt, find_invariant_breaches, oldest_active_attempt
from hub.work._leases import (
    AdapterEventResult,
    live_attempts_of_sessions,
    record_adapter_event,
    record_checkpoint,
    relinquish_attempt,
    renew_lease,
    session_attempts,
)
from hub.work._reading import (
    TaskFilter,
    candidates,
    get_task,
    get_tasks,
    list_tasks,
    similar_tasks,
    task_links,
    task_view,
)
from hub.work._recovery import add_recovery_note, record_recovery_disposition, recovery_packet
from hub.work._rows import session_of_attempt
from hub.work._submissions import (
    SubmitRequest,
    WorktreeRequest,
    reconcile_criteria,
    record_acceptance,
    register_worktree,
    submit_attempt,
)
from hub.work._tasks import (
    NewTask,
    TaskEdit,
    TaskFields,
    clean_fields,
    clean_labels,
    create_task,
    edit_task,
)
from hub.work._workflow import (
    Contributors,
    advance_to_integration,
    awaiting_review,
    complete_delivery,
    contributors,
    current_submission,
    finish_workflow_attempt,
    get_submission,
    list_submissions,
    lock_submission,
    open_workflow_task,
    reopen_workflow_task,
    repin_submission,
    return_for_revision,
    review_satisfied,
    subject_of,
    task_worktrees,
    workflow_sessions,
    workflow_tasks,
)
from hub.work.views import (
    AttemptResult,
    AttemptView,
    BoardCard,
    BoardHolder,
    BoardPage,
    ClaimResult,
    CreatedTask,
    CriteriaRevisionView,
    HeldAttempt,
    LinkView,
    RecoveryClaim,
    SimilarTask,
    SubmissionView,
    TaskGraph,
    TaskView,
    WaitEdge,
)


@raises(NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed)
def add_prerequisite(
    uow: UnitOfWork,
    actor: Actor,
    *,
    task_id: str,
    prerequisite_id: str,
    override_reason: str | None = None,
) -> TaskView:
    task = dependencies.add_prerequisite(
        uow,
        actor,
        task_id=task_id,
        prerequisite_id=prerequisite_id,
        override_reason=override_reason,
    )
    return task_view(uow, task)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def remove_prerequisite(
    uow: UnitOfWork,
    actor: Actor,
    *,
    task_id: str,
    prerequisite_id: str,
    override_reason: str | None = None,
) -> TaskView:
    task = dependencies.remove_prerequisite(
        uow,
        actor,
        task_id=task_id,
        prerequisite_id=prerequisite_id,
        override_reason=override_reason,
    )
    return task_view(uow, task)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def release_task(uow: UnitOfWork, actor: Actor, *, task_id: str, reason: str) -> TaskView:
    return task_view(uow, recovery.release_task(uow, actor, task_id=task_id, reason=reason))


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def revoke_attempt(uow: UnitOfWork, actor: Actor, *, attempt_id: str, reason: str) -> TaskView:
    return task_view(uow, recovery.revoke_attempt(uow, actor, attempt_id=attempt_id, reason=reason))


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's tasks, their criteria revisions, prerequisites and links, attempts
    and their notes, checkpoints, worktrees and submissions: every table of the work
    module, for an export (docs/exports.md)."""
    return export_tables(
        uow,
        project_id,
        project_tables(tables),
        # The search index's input, derived from title, outcome and criteria.
        omit={"tasks": ("search_text",)},
        # Named without a foreign key in the schema; the export says what they name.
        references={
            "tasks": {"subject_submission_id": "submissions", "current_attempt_id": "attempts"},
            "attempts": {"recovers_attempt_id": "attempts"},
        },
    )


__all__ = [
    "BOARD_DONE_RECENTLY",
    "BOARD_PER_PAGE",
    "BOARD_TEXT_MATCHES",
    "HOLDING",
    "MAX_CLOSE_NOTE",
    "MAX_REOPEN_CONDITION",
    "AdapterEventResult",
    "AttemptResult",
    "AttemptView",
    "BoardCard",
    "BoardHolder",
    "BoardPage",
    "BoardQuery",
    "ClaimRequest",
    "ClaimResult",
    "Closure",
    "Contributors",
    "CreatedTask",
    "CriteriaRevisionView",
    "HeldAttempt",
    "LinkView",
    "NewTask",
    "OpenAttempt",
    "PlannedEdit",
    "PlannedTask",
    "RecoveryClaim",
    "Ref",
    "Reviewer",
    "SimilarTask",
    "SubmissionView",
    "SubmitRequest",
    "TaskBrief",
    "TaskEdit",
    "TaskFields",
    "TaskFilter",
    "TaskGraph",
    "TaskView",
    "WaitEdge",
    "WorktreeRequest",
    "add_prerequisite",
    "add_recovery_note",
    "advance_to_integration",
    "awaiting_review",
    "board_card",
    "board_page",
    "board_text_terms",
    "candidates",
    "children_of",
    "claim_recovery",
    "claim_task",
    "clean_fields",
    "clean_labels",
    "close_task",
    "complete_delivery",
    "contributors",
    "count_attempts_by_state",
    "count_leases_expiring",
    "count_recovery_candidates",
    "create_task",
    "create_tasks",
    "criteria_history",
    "current_submission",
    "dependents_of",
    "edit_task",
    "edit_tasks",
    "export_rows",
    "find_cycle",
    "find_invariant_breaches",
    "finish_workflow_attempt",
    "get_attempt",
    "get_attempts",
    "get_submission",
    "get_task",
    "get_tasks",
    "hold_attempt",
    "link_tasks",
    "list_submissions",
    "list_tasks",
    "live_attempts_of_sessions",
    "lock_submission",
    "lock_tasks",
    "oldest_active_attempt",
    "open_workflow_task",
    "own_live_attempt",
    "project_graph",
    "reconcile_criteria",
    "record_acceptance",
    "record_adapter_event",
    "record_checkpoint",
    "record_recovery_disposition",
    "recovery_candidates",
    "recovery_packet",
    "register_worktree",
    "release_task",
    "relinquish_attempt",
    "remove_prerequisite",
    "renew_lease",
    "reopen_task",
    "reopen_workflow_task",
    "repin_submission",
    "require_independent",
    "require_own_attempt",
    "return_for_revision",
    "review_satisfied",
    "revoke_attempt",
    "session_attempts",
    "session_of_attempt",
    "similar_tasks",
    "subject_of",
    "submit_attempt",
    "task_counts",
    "task_links",
    "task_neighbourhood",
    "task_worktrees",
    "tasks_by_source",
    "tasks_waiting_on",
    "workflow_sessions",
    "workflow_tasks",
]
