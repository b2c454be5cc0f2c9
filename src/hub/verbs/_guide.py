"""What a model reads about each verb: when to call it, and what each problem means.

The MCP tools (`hub agent mcp` on the workstation, `/mcp` on the server) describe every
verb to the model that calls it. The schema's own description says what the verb does
(`Verb.summary`); this module adds the two things a model needs beyond it: *when* to
call the verb (`WHEN`), and for each typed problem the verb can answer with, what it
means and what to do about it (`REMEDIES`, by problem code). A problem is an answer,
never a crash: the tool result carries its code, the server's message and the remedy.

Tools are named after the verbs (`claimTask`, `recordCheckpoint`), so the texts here
name verbs, which are also the tools' names.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.verbs._verb import Verb

# Where a verb's arguments are the ones a client fills in from its state (the attempt
# held, its session): said once in the description of every tool that has them.
_HELD = (
    "It acts on the attempt this session holds (the one the last claimTask or "
    "claimRecovery returned); its id and generation are filled in for you."
)

WHEN: Mapping[str, str] = MappingProxyType(
    {
        "startSession": "Call it once, before anything else: every other verb runs inside a "
        "session. Call it again only after an UNAUTHENTICATED answer.",
        "endSession": "Call it when you stop working for good. An attempt you still hold "
        "stays yours until its lease expires; relinquishAttempt first if you will not finish.",
        "viewer": "Call it to check who you are to hub and the server's clock.",
        "recordAdapterEvent": "Harness hooks send it (turn ended, compacted, disconnected, "
        "resumed); a model rarely needs to.",
        "resolveProject": "Call it to turn a project's alias (its short name) into its id.",
        "candidates": "Call it to see what you could claim next, before claimTask.",
        "claimTask": "Call it to take work: with taskId to take that task, without to take "
        "the next eligible one of the project (kinds narrows it, e.g. [REVIEW]). It fails "
        "while you still hold an active attempt: submit or relinquish that one first.",
        "task": "Call it to read a task: what it asks for (outcome, acceptance criteria), "
        "its state and its current attempt. Without id: the task you hold.",
        "attempt": "Call it to read the attempt you hold as hub sees it now: its state, "
        "its lease and whether it still holds authority.",
        "renewLease": "Call it every heartbeatSeconds while you work on a task (the claim "
        "says how often); a checkpoint renews the lease too. If you stop renewing, the "
        "lease expires and the task becomes a recovery candidate for someone else. "
        + _HELD,
        "recordCheckpoint": "Call it after each meaningful step (a commit, a finished "
        "sub-task): it saves what you did and what is left, so that whoever resumes the "
        "task (you after a restart, or another agent) can carry on, and it renews the "
        "lease. " + _HELD,
        "submitAttempt": "Call it when the work is done and committed: it hands the result "
        "to review. On an implementation task the candidate revision is your worktree's "
        "HEAD. " + _HELD,
        "relinquishAttempt": "Call it when you will not finish the task: it gives the task "
        "back at once (with your reason for whoever takes it next). " + _HELD,
        "recordAcceptance": "Call it on a task whose acceptance criteria you checked, "
        "naming the evidence for each. " + _HELD,
        "reconcileCriteria": "Call it when the task's acceptance criteria changed while "
        "you held it (a STALE criteria revision): say how your work answers the new ones. "
        + _HELD,
        "openWatchWindow": "Call it before a long action that cannot renew the lease "
        "(a long build): hub keeps the lease for the window. " + _HELD,
        "closeWatchWindow": "Call it when the long action is over.",
        "registerWorktree": "Call it once you work in a checkout for the task: hub records "
        "the repository, branch and base revision, so a submission delivers its HEAD and "
        "a recovery finds the work. " + _HELD,
        "repositories": "Call it to list the project's repositories (their ids and "
        "remotes).",
        "claimRecovery": "Call it to take back a task whose attempt's lease expired (yours "
        "or another agent's). Then read recoveryPacket and decide with "
        "recordRecoveryDisposition before continuing.",
        "recoveryPacket": "Call it after claimRecovery: what the earlier attempt left "
        "(checkpoints, jobs, holds, integrations, worktrees).",
        "recordRecoveryDisposition": "Call it after reading the recovery packet: CONTINUE "
        "the earlier work, RESTART from the target, or give up. " + _HELD,
        "submission": "Call it on a review task to read what you review: the submission, "
        "its candidate revision, its evidence and the open findings. Without id: the "
        "submission of the review you hold.",
        "submitReview": "Call it on a review task you hold, once you have read the "
        "submission: APPROVE, or REJECT with findings (severity, title, remedy). You may "
        "not review your own work. " + _HELD,
        "requestHumanReview": "Call it when a submission needs a human's judgement "
        "(security, product decisions): it waits for a person.",
        "resolveFinding": "Call it on a finding of an earlier review that your new "
        "submission fixes, with the evidence.",
        "claimIntegration": "Call it to integrate an approved submission into its target "
        "branch: it reserves the target for you.",
        "integration": "Call it to read an integration: its state, target and revisions. "
        "Without id: the one you hold.",
        "recordIntegrationResult": "Call it after you tried to publish the candidate onto "
        "the target: PUBLISHED with the base and result revisions, or TARGET_MOVED, "
        "CONFLICT, UNCERTAIN, ABANDONED. " + _HELD,
        "recordValidation": "Call it after checks ran on the published result: passed or "
        "not, with the evidence. Only then is the task done. " + _HELD,
        "reconcileIntegration": "Call it when an integration is UNCERTAIN: say what the "
        "remote's target holds now.",
        "registerJob": "Call it before a long-running job (tests, a build) whose result "
        "counts as evidence: hub follows it. " + _HELD,
        "observeJob": "Call it to report a job's progress (RUNNING, a heartbeat).",
        "finishJob": "Call it when the job ended, with its exit status.",
        "job": "Call it to read a job's state.",
        "recordEvidence": "Call it with the results of the checks you ran (which checks, "
        "their outcomes, on which revision): reviews and validation rely on it. " + _HELD,
        "resources": "Call it to list the project's shared resources (test databases, "
        "devices) and who holds them.",
        "acquireResources": "Call it before using a shared resource; release it when done. "
        + _HELD,
        "releaseResources": "Call it when you no longer need the resources you acquired. "
        + _HELD,
        "searchKnowledge": "Call it before starting a task and whenever you are stuck: "
        "lessons other agents learned in this project.",
        "publishLesson": "Call it when you learned something others would need (a trap, "
        "a convention, a fix): one statement, its explanation and evidence.",
        "orientation": "Call it at the start of a session or a task: the project's rules, "
        "its conventions and the lessons that apply.",
    }
)

REMEDIES: Mapping[str, str] = MappingProxyType(
    {
        "NOT_FOUND": "Nothing with that id exists in a project you can see. Check the id "
        "(copy it from an earlier answer); do not guess ids.",
        "NO_ELIGIBLE_TASK": "Nothing is ready to claim now. This is not a failure: wait, "
        "or look at candidates, and try again later.",
        "PERMISSION_DENIED": "Your credential may not do this (for example, review your "
        "own work, or act in another project). Do not retry; tell the human supervising "
        "you if you need it done.",
        "CONFLICT": "The request conflicts with the current state (someone else holds the "
        "task, or it changed). Read the current state (task, attempt) and decide again.",
        "LEASE_EXPIRED": "Your lease expired: you no longer own the task and may not "
        "change it. Stop; take it back with claimRecovery if it is still yours to do.",
        "STALE_GENERATION": "A newer attempt owns this task now: your changes are refused. "
        "Stop working on it and claim other work.",
        "INVALID_TRANSITION": "The task or attempt is not in a state where this is allowed "
        "(already submitted, closed). Read its state and do the step it needs.",
        "DEPENDENCY_NOT_MET": "The task waits for another task to be done first. Claim "
        "other work.",
        "IDEMPOTENCY_CONFLICT": "This idempotency key was already used for a different "
        "request. Send the new request with a new key.",
        "IDEMPOTENCY_RECEIPT_EXPIRED": "The earlier request with this key is too old to "
        "replay. Read the current state to learn whether it took effect.",
        "VALIDATION_FAILED": "An argument is not acceptable (the message names it). Fix "
        "that argument and call again.",
        "QUOTA_EXCEEDED": "A limit was reached. Wait, or release what you no longer need.",
        "BLOCKED": "The task is blocked (a hold or an unmet condition, listed in "
        "blockers). Claim other work, or ask a human to clear the hold.",
        "AMBIGUOUS_PROJECT": "The project alias matches more than one project: use the "
        "project's id.",
        "DUPLICATE_OF_UNFINISHED": "An unfinished task already asks for this: use it.",
        "UNAUTHENTICATED": "hub no longer takes this session (it ended, or its token was "
        "revoked). Call startSession again to open a new one; an attempt of the old "
        "session becomes a recovery candidate when its lease expires (claimRecovery).",
    }
)

# A problem type of the schema (`LeaseExpired`) and its code (`LEASE_EXPIRED`).
_CODE_OF = {
    "NotFound": "NOT_FOUND",
    "PermissionDenied": "PERMISSION_DENIED",
    "Conflict": "CONFLICT",
    "LeaseExpired": "LEASE_EXPIRED",
    "StaleGeneration": "STALE_GENERATION",
    "InvalidTransition": "INVALID_TRANSITION",
    "DependencyNotMet": "DEPENDENCY_NOT_MET",
    "IdempotencyConflict": "IDEMPOTENCY_CONFLICT",
    "IdempotencyReceiptExpired": "IDEMPOTENCY_RECEIPT_EXPIRED",
    "ValidationFailed": "VALIDATION_FAILED",
    "QuotaExceeded": "QUOTA_EXCEEDED",
    "Blocked": "BLOCKED",
}


def remedy(code: str) -> str | None:
    """What a problem with this code means and what to do about it, if said."""
    return REMEDIES.get(code)


@functools.cache
def problem_types() -> frozenset[str]:
    """The schema's problem types: those implementing `Problem` (a result union's other
    member is the payload)."""
    from graphql import GraphQLObjectType

    from hub.verbs._verb import api_schema

    return frozenset(
        t.name
        for t in api_schema().type_map.values()
        if isinstance(t, GraphQLObjectType) and any(i.name == "Problem" for i in t.interfaces)
    )


def problem_codes(verb: Verb) -> tuple[str, ...]:
    """The codes of the problems in the verb's result union (none for a query)."""
    from graphql import GraphQLNonNull, GraphQLUnionType

    from hub.verbs._verb import api_schema

    schema = api_schema()
    root = schema.query_type if verb.kind.value == "query" else schema.mutation_type
    if root is None or verb.field not in root.fields:
        return ()
    answer = root.fields[verb.field].type
    if isinstance(answer, GraphQLNonNull):
        answer = answer.of_type
    if not isinstance(answer, GraphQLUnionType):
        return ()
    codes = [_CODE_OF[t.name] for t in answer.types if t.name in _CODE_OF]
    if "NOT_FOUND" in codes and verb.name == "claimTask":
        codes.insert(codes.index("NOT_FOUND") + 1, "NO_ELIGIBLE_TASK")
    return tuple(codes)


def description(verb: Verb) -> str:
    """The tool's description: what the verb does, when to call it, and each problem
    it may answer with, with what to do about it."""
    parts = [verb.summary]
    when = WHEN.get(verb.name)
    if when:
        parts.append(when)
    codes = problem_codes(verb)
    if codes:
        lines = [f"- {code}: {REMEDIES[code]}" for code in codes]
        heading = "Problems it may answer with (as a result, not an error):"
        parts.append("\n".join([heading, *lines]))
    return "\n\n".join(parts)
