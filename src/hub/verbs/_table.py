"""Every operation a hub client sends, one `Verb` each, with what a client fills in.

What `fills` and `defaults` list is what `hub agent` does today (`hub.client`): an
adapter that keeps the same state (a session, the attempt held, its worktree) fills in
the same arguments, and asks its caller for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from hub.verbs._verb import Verb

# The attempt held: every ownership-dependent change names it and its generation.
_HELD = ("attemptId", "generation")

_DECLARED = (
    # --- sessions -----------------------------------------------------------------
    Verb("startSession", defaults=("workstation",)),
    Verb("endSession", fills=("sessionId",)),
    Verb("viewer"),
    Verb("recordAdapterEvent", fills=("sessionId", "attemptId", "generation")),
    # --- claims and the attempt held ------------------------------------------------
    Verb("resolveProject"),
    Verb("candidates"),
    Verb("claimTask"),
    Verb("task", defaults=("id",)),
    Verb("attempt", fills=("id",)),
    Verb("renewLease", fills=_HELD),
    Verb("recordCheckpoint", fills=_HELD, defaults=("revision", "branch")),
    Verb("submitAttempt", fills=_HELD, defaults=("candidateRevision",)),
    Verb("relinquishAttempt", fills=_HELD),
    Verb("recordAcceptance", fills=_HELD, defaults=("criteriaRevision",)),
    Verb("reconcileCriteria", fills=_HELD, defaults=("criteriaRevision",)),
    Verb("openWatchWindow", fills=_HELD),
    Verb("closeWatchWindow", fills=("windowId",)),
    # --- worktrees, from the checkout -------------------------------------------------
    Verb(
        "registerWorktree",
        fills=(*_HELD, "worktreeId", "branch", "baseRevision", "workstation"),
        defaults=("repositoryId", "path"),
    ),
    Verb("repositories", defaults=("projectId",)),
    # --- recovery -----------------------------------------------------------------
    Verb("claimRecovery"),
    Verb("recoveryPacket", defaults=("taskId",)),
    Verb("recordRecoveryDisposition", fills=_HELD),
    # --- review -------------------------------------------------------------------
    Verb("submission"),
    Verb("submitReview", fills=(*_HELD, "submissionId")),
    Verb("requestHumanReview"),
    Verb("resolveFinding"),
    # --- integration ----------------------------------------------------------------
    Verb("claimIntegration", defaults=("observedTargetRevision",)),
    Verb("integration", defaults=("id",)),
    Verb(
        "recordIntegrationResult",
        fills=(*_HELD, "integrationId"),
        defaults=("targetBranch",),
    ),
    Verb("recordValidation", fills=(*_HELD, "integrationId"), defaults=("evidenceIds",)),
    Verb("reconcileIntegration", defaults=("integrationId",)),
    # --- jobs and evidence ------------------------------------------------------------
    Verb("registerJob", fills=_HELD, defaults=("jobId", "producer", "runnerHost", "checkout")),
    Verb("observeJob", defaults=("jobId",)),
    Verb("finishJob", defaults=("jobId",)),
    Verb("job"),
    Verb(
        "recordEvidence",
        fills=_HELD,
        defaults=("jobId", "environmentIdentity", "startedAt", "endedAt"),
    ),
    # --- resources ------------------------------------------------------------------
    Verb("resources", defaults=("projectId",)),
    Verb("acquireResources", fills=_HELD),
    Verb("releaseResources", fills=_HELD, defaults=("reservationIds",)),
    # --- lessons and orientation -------------------------------------------------------
    Verb("searchKnowledge", defaults=("projectId",)),
    Verb("publishLesson", defaults=("projectId", "taskId")),
    Verb("orientation", defaults=("projectId", "taskId", "localInstructions")),
    # --- planning: `hub task …` and `hub project …` -------------------------------------
    Verb("createTask", agent=False),
    Verb("editTask", agent=False),
    Verb("closeTask", agent=False),
    Verb("reopenTask", agent=False),
    Verb("linkTasks", agent=False),
    Verb("addPrerequisite", agent=False),
    Verb("removePrerequisite", agent=False),
    Verb("tasks", agent=False),
    Verb("similarTasks", agent=False),
    Verb("createProject", agent=False),
    Verb("addRepository", agent=False),
    Verb("setProjectPolicy", agent=False),
    Verb("project", agent=False),
    Verb("projects", agent=False),
)

VERBS: Mapping[str, Verb] = MappingProxyType({verb.name: verb for verb in _DECLARED})
