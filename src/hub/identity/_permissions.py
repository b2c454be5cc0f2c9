"""Which credential may call which API operation: one table, one check.

Every root field of the GraphQL schema (query, mutation, subscription), and every
plain-HTTP route that is an operation of its own (a `route`: an artifact's upload,
download and preview, a project's export), has one row in `OPERATIONS`: the
credentials that may call it and, for each, the role its principal needs. `authorize`
is called for every operation before it runs (`hub.api.operations`, the artifact and
export routes);
an operation without a row is refused, so a new operation is closed until someone
decides who may call it. `docs/credentials.md` is this table, rendered by `render_table`
(a test keeps the two identical).

The table decides by credential kind and role only. Which record a caller may touch
(its own session's attempt, the one attempt a reporter token serves, the window it
was issued for) stays with the service that owns the record; `require_reporter_scope`
is the one such check the read side needs.

Credentials:

- `personal`: a principal's own token (`hub_pat_…`), the workstation credential;
- `session`: the token of one agent session (`hub_ses_…`, from `startSession`); every
  ownership-dependent change needs it, and a session acts only on itself;
- `reporter`: a watch window's token (`hub_rep_…`): it renews its one attempt within the
  window and reports that attempt's jobs, and reads only what it reports on;
- `web`: a principal signed in to the dashboard (cookie session). The dashboard calls
  the service layer directly; its column says which operations it may offer.

The server's own `system` actor (maintenance, the CLI) never passes through the API and
has no column: the table refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from hub.errors import PermissionDenied
from hub.identity.views import (
    Actor,
)
from hub.identity.vocabulary import (
    CredentialKind,
)

TableCredential = Literal["personal", "session", "reporter", "web"]
Role = Literal["any", "human", "operator"]
OperationType = Literal["query", "mutation", "subscription", "route"]

CREDENTIALS: Final[tuple[TableCredential, ...]] = ("personal", "session", "reporter", "web")

_CREDENTIAL_NAMES: Final[Mapping[CredentialKind, str]] = {
    CredentialKind.PERSONAL: "a personal token",
    CredentialKind.SESSION: "a session token",
    CredentialKind.REPORTER: "a reporter token",
    CredentialKind.WEB: "the dashboard",
    CredentialKind.SYSTEM: "the system actor",
}


@dataclass(frozen=True)
class Rule:
    type: OperationType
    allowed: Mapping[TableCredential, Role]
    note: str = ""


class OperationRefused(PermissionDenied):
    """The credential table refuses this caller this operation (kind or role)."""

    def __init__(self, operation: str, credential: CredentialKind, message: str) -> None:
        super().__init__(message)
        self.operation = operation
        self.credential = credential


class OutsideReporterScope(PermissionDenied):
    """A reporter token asked about something other than its one attempt."""


# Shorthands for the rows below.
_ANY: Final[Role] = "any"
_SESSION: Final[Mapping[TableCredential, Role]] = {"session": _ANY}
_REPORTING: Final[Mapping[TableCredential, Role]] = {"session": _ANY, "reporter": _ANY}
_EDITING: Final[Mapping[TableCredential, Role]] = {
    "personal": _ANY, "session": _ANY, "web": _ANY,
}
_OPERATOR: Final[Mapping[TableCredential, Role]] = {"personal": "operator", "web": "operator"}
_HUMAN: Final[Mapping[TableCredential, Role]] = {"personal": "human", "web": "human"}
_READING: Final[Mapping[TableCredential, Role]] = _EDITING
_READING_AND_REPORTER: Final[Mapping[TableCredential, Role]] = {
    **_READING, "reporter": _ANY,
}


def _mutation(allowed: Mapping[TableCredential, Role], note: str = "") -> Rule:
    return Rule("mutation", allowed, note)


def _query(allowed: Mapping[TableCredential, Role] = _READING, note: str = "") -> Rule:
    return Rule("query", allowed, note)


OPERATIONS: Final[Mapping[str, Rule]] = {
    # --- identity -------------------------------------------------------------------
    "startSession": _mutation(
        {"personal": _ANY},
        "a session is opened with the workstation credential; a session cannot spawn "
        "sessions that would outlive the revocation of its parent",
    ),
    "endSession": _mutation(
        {"session": _ANY, "web": "operator"},
        "a session ends itself, or an operator ends it from the dashboard with a reason; a "
        "lost session token is also cut off by revoking the personal token that opened it "
        "or by an operator disabling the principal",
    ),
    "clearLoginLockout": _mutation(
        _OPERATOR,
        "ends a dashboard sign-in lockout on a name or an address now (also `hub login "
        "clear`)",
    ),
    # --- projects -------------------------------------------------------------------
    "createProject": _mutation(_EDITING),
    "addRepository": _mutation(_EDITING),
    "addProjectAlias": _mutation(_EDITING),
    "setProjectPolicy": _mutation(_OPERATOR),
    # --- tasks ------------------------------------------------------------------------
    "createTask": _mutation(_EDITING),
    "editTask": _mutation(_EDITING),
    "addPrerequisite": _mutation(_EDITING, "an operator overrides for a task under work"),
    "removePrerequisite": _mutation(_EDITING, "an operator overrides for a task under work"),
    "linkTasks": _mutation(_EDITING),
    "closeTask": _mutation(_EDITING),
    "reopenTask": _mutation(_EDITING),
    # --- attempts (ownership: the session that claimed) ---------------------------------
    "claimTask": _mutation(_SESSION),
    "claimRecovery": _mutation(_SESSION),
    "releaseTask": _mutation(_OPERATOR),
    "revokeAttempt": _mutation(_OPERATOR, "ends a live lease now; the attempt is fenced"),
    "renewLease": _mutation(_REPORTING, "a reporter renews its one attempt, within its window"),
    "registerWorktree": _mutation(_SESSION),
    "recordCheckpoint": _mutation(_SESSION),
    "relinquishAttempt": _mutation(_SESSION),
    "submitAttempt": _mutation(_SESSION),
    "recordRecoveryDisposition": _mutation(_SESSION),
    "addRecoveryNote": _mutation(_SESSION, "the session that ran the attempt, after it ended"),
    "reconcileCriteria": _mutation(_SESSION),
    "recordAcceptance": _mutation(_SESSION),
    "recordAdapterEvent": _mutation(_SESSION, "what the harness saw, for its own session"),
    # --- review -----------------------------------------------------------------------
    "submitReview": _mutation(_SESSION, "an agent review is the attempt of a REVIEW task"),
    "recordHumanReview": _mutation(_HUMAN),
    "requestHumanReview": _mutation(_EDITING),
    "resolveFinding": _mutation(
        _EDITING,
        "cleared by its author, an operator or a later submission's reviewer; the "
        "contributors only propose for BLOCKER and MAJOR",
    ),
    "repinSubmissionPolicy": _mutation(_OPERATOR),
    # --- integration ------------------------------------------------------------------
    "claimIntegration": _mutation(_SESSION),
    "recordIntegrationResult": _mutation(_SESSION),
    "reconcileIntegration": _mutation(
        {"session": _ANY, "personal": "operator", "web": "operator"},
        "the integrator's own session, or an operator",
    ),
    "recordValidation": _mutation(_SESSION),
    "releaseIntegration": _mutation(
        _OPERATOR, "frees a target left by a gone integrator; never an uncertain publish"
    ),
    # --- jobs -------------------------------------------------------------------------
    "registerJob": _mutation(_SESSION),
    "observeJob": _mutation(_REPORTING, "a reporter reports its attempt's jobs only"),
    "finishJob": _mutation(_REPORTING, "a reporter reports its attempt's jobs only"),
    "recordEvidence": _mutation(_REPORTING, "a reporter records evidence for its jobs only"),
    "openWatchWindow": _mutation(_SESSION, "a reporter cannot extend its own reach"),
    "closeWatchWindow": _mutation(
        {"session": _ANY, "reporter": _ANY, "personal": "operator", "web": "operator"},
        "the session that opened it, its own reporter, or an operator",
    ),
    # --- resources --------------------------------------------------------------------
    "defineResource": _mutation(_EDITING),
    "acquireResources": _mutation(_SESSION),
    "releaseResources": _mutation(_SESSION),
    "clearHold": _mutation(_OPERATOR),
    "recordCapacityObservation": _mutation(_EDITING),
    # --- knowledge --------------------------------------------------------------------
    "publishLesson": _mutation(_EDITING),
    "correctLesson": _mutation(_EDITING, "a current lesson's current version, by anyone"),
    "supersedeLesson": _mutation(_EDITING),
    "disputeLesson": _mutation(_EDITING),
    "resolveDispute": _mutation(
        _EDITING,
        "an operator, any way; the principal who raised it, as DISMISSED or CORRECTED; the "
        "lesson's author, as CORRECTED",
    ),
    "rateLesson": _mutation(_EDITING, "one vote per principal and lesson"),
    "reviseRule": _mutation(
        _EDITING,
        "operators always; anyone else under an active rule delegation, while the "
        "project's policy allows delegation",
    ),
    "grantRuleDelegation": _mutation(_OPERATOR),
    "revokeRuleDelegation": _mutation(_OPERATOR),
    # --- artifacts --------------------------------------------------------------------
    "linkExternalArtifact": _mutation(_EDITING),
    "deleteArtifact": _mutation(
        _EDITING, "by its author (any credential of theirs) or an operator"
    ),
    # --- imports ----------------------------------------------------------------------
    "importTasks": _mutation(
        _EDITING,
        "also `POST /api/imports` (JSON Lines), under this row; never a reporter token",
    ),
    # --- queries ----------------------------------------------------------------------
    "viewer": _query(_READING_AND_REPORTER, "who the credential belongs to"),
    "projects": _query(),
    "project": _query(),
    "resolveProject": _query(),
    "task": _query(),
    "tasks": _query(),
    "candidates": _query(),
    "similarTasks": _query(_READING, "the project's own tasks only, open and closed"),
    "attempt": _query(_READING_AND_REPORTER, "a reporter reads only its own attempt"),
    "recoveryPacket": _query(),
    "submission": _query(),
    "reviewQueue": _query(),
    "integration": _query(),
    "integrations": _query(),
    "events": _query(),
    "job": _query(_READING_AND_REPORTER, "a reporter reads only its own attempt's jobs"),
    "jobs": _query(),
    "evidence": _query(),
    "watchWindow": _query(),
    "resources": _query(),
    "reservation": _query(),
    "lesson": _query(),
    "lessons": _query(),
    "searchKnowledge": _query(
        _READING, "any project's lessons (CROSS_PROJECT): lessons are shared across projects"
    ),
    "rule": _query(),
    "rules": _query(),
    "ruleDelegations": _query(),
    "orientation": _query(
        _READING, "reads the rules and lessons; the local files are text the caller sends"
    ),
    "artifact": _query(),
    "artifacts": _query(),
    "importReport": _query(),
    "importReports": _query(),
    # --- subscriptions ----------------------------------------------------------------
    "projectEvents": Rule("subscription", _READING),
    "jobObservations": Rule(
        "subscription", _READING_AND_REPORTER, "a reporter follows only its own attempt's jobs"
    ),
    # --- plain HTTP routes: files do not travel through GraphQL -------------------------
    "uploadArtifact": Rule(
        "route",
        {"personal": _ANY, **_REPORTING},
        "`POST /api/artifacts`; a reporter uploads for a job of its own attempt only",
    ),
    "downloadArtifact": Rule("route", _READING, "`GET /artifacts/{id}`"),
    "previewArtifact": Rule(
        "route", {"web": _ANY}, "`GET /artifacts/{id}/preview`, a page of the dashboard"
    ),
    "revokeToken": Rule(
        "route",
        {"web": "operator"},
        "`POST /tokens/{id}/revoke`, an operator action of the dashboard, with a reason "
        "(the command line's `hub token revoke` acts as the server itself)",
    ),
    "exportProject": Rule(
        "route",
        {"personal": _ANY, "session": _ANY},
        "`GET /api/projects/{id}/export`: the credentials that read a project through "
        "the API (a bearer token; the dashboard offers no export)",
    ),
}


def refusal(actor: Actor, operation: str) -> str | None:
    """Why the table refuses `actor` the operation, or None when it allows it."""
    rule = OPERATIONS.get(operation)
    if rule is None:
        return f"{operation or 'this operation'} is not an operation anyone may call"
    role = next((r for c, r in rule.allowed.items() if c == actor.credential), None)
    if role is None:
        who = _CREDENTIAL_NAMES[actor.credential]
    elif role == "operator" and not actor.is_operator:
        who = "a non-operator"
    elif role == "human" and not actor.is_human:
        who = "a non-human principal"
    else:
        return None
    return f"{who} cannot call {operation} ({operation} takes {_takes(rule)})"


def authorize(actor: Actor, operation: str) -> Actor:
    """The actor, if the table lets it call `operation`; else `OperationRefused`."""
    reason = refusal(actor, operation)
    if reason is not None:
        raise OperationRefused(operation, actor.credential, reason)
    return actor


def require_reporter_scope(actor: Actor, attempt_id: str, what: str) -> None:
    """A reporter token reads only its own attempt and that attempt's jobs."""
    if actor.is_reporter and actor.scope.get("attempt_id") != attempt_id:
        raise OutsideReporterScope(
            f"a reporter token reads only its own attempt and its jobs, not {what}"
        )


def _takes(rule: Rule) -> str:
    parts = [_phrase(credential, role) for credential, role in rule.allowed.items()]
    return ", ".join(parts[:-1]) + (" or " if len(parts) > 1 else "") + parts[-1]


def _phrase(credential: TableCredential, role: Role) -> str:
    if credential == "web":
        return {"any": "the dashboard", "human": "a human in the dashboard",
                "operator": "an operator in the dashboard"}[role]
    token = f"{credential} token"
    return {"any": f"a {token}", "human": f"a human's {token}",
            "operator": f"an operator's {token}"}[role]


# --- the documentation ------------------------------------------------------------------

_CELL: Final[Mapping[Role, str]] = {"any": "yes", "human": "human", "operator": "operator"}


def render_table() -> str:
    """`docs/credentials.md`'s table: every operation by every credential."""
    lines = [
        "| operation | type | personal | session | reporter | web | note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    order: tuple[OperationType, ...] = ("mutation", "query", "subscription", "route")
    for kind in order:
        for name, rule in OPERATIONS.items():
            if rule.type != kind:
                continue
            cells = []
            for credential in CREDENTIALS:
                role = rule.allowed.get(credential)
                cells.append("—" if role is None else _CELL[role])
            lines.append(f"| `{name}` | {kind} | {' | '.join(cells)} | {rule.note} |")
    return "\n".join(lines) + "\n"
