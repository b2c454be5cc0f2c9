"""The agent's verbs as MCP tools on the workstation: one entry per verb, run by the agent
client exactly as the command line runs it.

A tool is a verb of `hub.verbs` (its name, its description for a model, the JSON Schema
of what the caller gives) joined to the `AgentClient` call that `hub agent` makes for
it. The client keeps the state the command line keeps, in the same state file: the
session token, the attempt held and its conservative local deadline, and the idempotency
key of every keyed request until a definite answer arrives, so a call repeated after a
lost answer replays the first instead of applying twice. What the client fills in from
that state (the attempt's id and generation, the session) is never asked of the model.

Where the client's call takes fewer arguments than the verb (a submission's lessons are
published with `publishLesson`, not inside `submitAttempt`), `takes` narrows the schema
to what is honoured: a tool never offers an argument it would drop.

Verbs that keep no state on the workstation (queries, a lesson, a finding's resolution,
evidence) are sent as they are by `_sent`, with the same state rules: the attempt's
fields are filled in, the local deadline is checked, a keyed request keeps its key
pending until answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from hub.client.adapter import AdapterEvent
from hub.client.agent import AgentClient
from hub.client.delivery import ResourceRequest
from hub.client.engine import require_attempt, require_session
from hub.client.errors import Unauthenticated
from hub.client.operations import Mutation
from hub.client.results import TaskBrief
from hub.client.reviewing import FindingDraft
from hub.mcp.launch import Launch
from hub.verbs import VERBS, Verb, description

Run = Callable[[AgentClient, Launch, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Tool:
    verb: Verb
    run: Run
    takes: tuple[str, ...] | None = None  # the arguments honoured, where not all
    optional: tuple[str, ...] = ()  # required by the verb, filled from `Launch` here

    @property
    def name(self) -> str:
        return self.verb.name

    def description(self) -> str:
        return description(self.verb)

    def input_schema(self) -> dict[str, Any]:
        whole = self.verb.tool_schema()
        kept = whole["properties"] if self.takes is None else self.takes
        return {
            **whole,
            "properties": {k: v for k, v in whole["properties"].items() if k in kept},
            "required": [n for n in whole["required"] if n in kept and n not in self.optional],
        }


# --- the calls ---------------------------------------------------------------------


def _start(client: AgentClient, launch: Launch, given: Mapping[str, Any]) -> Any:
    """Open a session with the launch's token, or keep the one the state file holds while
    hub still takes it: a model may call this again safely."""
    state = client.state_file.read()
    if state.session is not None and state.server is not None:
        try:
            with client.api(state.server, state.session.token) as api:
                api.viewer()
            return {"session": state.session, "kept": True}
        except Unauthenticated:
            pass  # ended or revoked: open a new one in its place
    if launch.server is None or launch.token is None:
        raise Unauthenticated(
            "no session, and `hub agent mcp` was started without a server and token "
            "(HUB_SERVER and HUB_TOKEN) to open one"
        )
    session = client.start(
        server=launch.server,
        token=launch.token,
        workstation=given.get("workstation") or launch.workstation,
        harness=given.get("harness") or launch.harness,
        instance=given.get("harnessInstance") or launch.instance,
        replace=True,
    )
    return {"session": session, "kept": False}


def _sent(client: AgentClient, verb: Verb, given: Mapping[str, Any]) -> Any:
    """Send the verb's document as it is, filling in from the state file what the
    command line fills in; a keyed mutation keeps its key pending until answered."""
    state = client.state_file.read()
    server, session = require_session(state)
    arguments = {k: v for k, v in given.items() if v is not None}
    held = state.attempt
    for name in verb.filled:
        if name == "sessionId":
            arguments[name] = session.id
        elif name in ("attemptId", "generation"):
            attempt = require_attempt(state)
            arguments.update(attemptId=attempt.id, generation=attempt.generation)
    if held is not None:
        for name, value in (("projectId", held.project_id), ("taskId", held.task_id)):
            if name in verb.defaults and name not in arguments:
                arguments[name] = value
    if verb.kind.value == "query":
        with client.api(server, session.token) as api:
            answer: Any = api.run(verb.name, verb.variables(arguments)).data[verb.field]
            return answer
    return client.send_as_is(
        Mutation(verb.name, arguments, _Raw),
        keyed="idempotencyKey" in verb.filled,
        under_attempt="attemptId" in verb.filled,
    )


class _Raw:
    """The answer of a verb sent as it is: kept as received."""

    graphql_type: ClassVar[str] = ""


def _plain(name: str) -> Tool:
    verb = VERBS[name]
    return Tool(verb, lambda client, _launch, given: _sent(client, verb, given))


def _subject(brief: TaskBrief) -> Any:
    """A submission as the review reads it (its task, reviews, findings and status)."""
    return brief if brief.subject is None else brief.subject


def _list(value: Any) -> list[Any]:
    return list(value or ())


def _when(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _path(value: Any, launch: Launch) -> Path:
    return launch.workdir if value is None else (launch.workdir / str(value))


def _tool(name: str, run: Run, takes: Sequence[str] | None = None, **more: Any) -> Tool:
    return Tool(VERBS[name], run, None if takes is None else tuple(takes), **more)


_TOOLS = (
    # --- sessions -------------------------------------------------------------------
    _tool("startSession", _start, optional=("harness", "harnessInstance")),
    _tool("endSession", lambda c, _l, a: c.end(reason=a.get("reason") or "")),
    _plain("viewer"),
    _tool(
        "recordAdapterEvent",
        lambda c, _l, a: c.record_adapter_event(
            AdapterEvent(a["event"]), detail=a.get("detail") or ""
        ),
    ),
    # --- claims and the attempt held --------------------------------------------------
    _plain("resolveProject"),
    _plain("candidates"),
    _tool(
        "claimTask",
        lambda c, launch, a: c.claim(
            project=a["projectId"],
            task_id=a.get("taskId"),
            kinds=_list(a.get("kinds")),
            workdir=launch.workdir,
        ),
    ),
    _tool("task", lambda c, _l, a: c.show(a.get("id"))),
    _tool("attempt", lambda c, _l, _a: c.status(refresh=True)),
    _tool("renewLease", lambda c, _l, _a: c.heartbeat()),
    _tool(
        "recordCheckpoint",
        lambda c, _l, a: c.checkpoint(
            summary=a["summary"],
            revision=a.get("revision"),
            branch=a.get("branch"),
            published=bool(a.get("published")),
        ),
    ),
    _tool(
        "submitAttempt",
        lambda c, _l, a: c.submit(
            result=a["result"],
            outcome=a.get("outcome") or "DELIVERED",
            handoff=a.get("handoff") or "",
            candidate_revision=a.get("candidateRevision"),
            evidence_ids=_list(a.get("evidenceIds")),
        ),
        takes=("outcome", "result", "handoff", "candidateRevision", "evidenceIds"),
    ),
    _tool("relinquishAttempt", lambda c, _l, a: c.relinquish(reason=a["reason"])),
    _tool(
        "recordAcceptance",
        lambda c, _l, a: c.accept(
            evidence=_list(a.get("evidence")),
            note=a.get("note") or "",
            criteria_revision=a.get("criteriaRevision"),
        ),
    ),
    _tool(
        "reconcileCriteria",
        lambda c, _l, a: c.reconcile_criteria(
            note=a["note"], criteria_revision=a.get("criteriaRevision")
        ),
    ),
    # --- worktrees, from the checkout ----------------------------------------------------
    _tool(
        "registerWorktree",
        lambda c, launch, a: c.worktree_register(
            path=_path(a.get("path"), launch), repository=a.get("repositoryId")
        ),
    ),
    _plain("repositories"),
    # --- recovery -------------------------------------------------------------------
    _tool("claimRecovery", lambda c, _l, a: c.recover(a["taskId"])),
    _tool("recoveryPacket", lambda c, _l, a: c.recovery_packet(a.get("taskId"))),
    _tool(
        "recordRecoveryDisposition",
        lambda c, _l, a: c.recover_disposition(
            disposition=a["disposition"], reason=a.get("reason") or ""
        ),
    ),
    # --- review ---------------------------------------------------------------------
    _tool(
        "submission",
        lambda c, _l, a: _subject(c.review_show(a.get("id"))),
        optional=("id",),
    ),
    _tool(
        "submitReview",
        lambda c, _l, a: c.review(
            decision=a["decision"],
            summary=a["summary"],
            findings=[
                FindingDraft(f["severity"], f["title"], f["remedy"], f.get("detail") or "")
                for f in _list(a.get("findings"))
            ],
            evidence=_list(a.get("evidence")),
            artifact_ids=_list(a.get("artifactIds")),
        ),
        takes=("decision", "summary", "findings", "evidence", "artifactIds"),
    ),
    _plain("requestHumanReview"),
    _plain("resolveFinding"),
    # --- integration ----------------------------------------------------------------
    _tool(
        "claimIntegration",
        lambda c, launch, a: c.integrate_claim(
            a["submissionId"],
            observed_target_revision=a.get("observedTargetRevision"),
            target_branch=a.get("targetBranch"),
            workdir=launch.workdir,
        ),
    ),
    _tool("integration", lambda c, _l, a: c.integrate_show(a.get("id"))),
    _tool(
        "recordIntegrationResult",
        lambda c, _l, a: c.integrate_report(
            outcome=a["outcome"],
            base_revision=a.get("baseRevision"),
            result_revision=a.get("resultRevision"),
            target_branch=a.get("targetBranch"),
            verified_how=a.get("verifiedHow") or "CLIENT_REPORTED",
            note=a.get("note") or "",
        ),
        takes=("outcome", "targetBranch", "baseRevision", "resultRevision", "verifiedHow", "note"),
    ),
    _tool(
        "recordValidation",
        lambda c, _l, a: c.integrate_validate(
            result_revision=a["resultRevision"],
            evidence_ids=_list(a.get("evidenceIds")),
            passed=bool(a["passed"]),
            summary=a.get("summary") or "",
        ),
        takes=("resultRevision", "passed", "evidenceIds", "summary"),
    ),
    _tool(
        "reconcileIntegration",
        lambda c, _l, a: c.integrate_reconcile(
            remote_revision=a["remoteRevision"],
            published=bool(a["published"]),
            integration_id=a.get("integrationId"),
            verified_how=a.get("verifiedHow") or "CLIENT_REPORTED",
            note=a.get("note") or "",
        ),
    ),
    # --- jobs and evidence --------------------------------------------------------------
    _tool(
        "registerJob",
        lambda c, launch, a: c.job_register(
            operation=a["operation"],
            invocation=a["invocation"],
            job_id=a.get("jobId"),
            producer=a.get("producer"),
            runner_host=a.get("runnerHost"),
            checkout=a.get("checkout"),
            snapshot=a.get("snapshot"),
            expected_deadline=_when(a.get("expectedDeadline")),
            freshness_seconds=a.get("freshnessSeconds"),
            reservation_ids=_list(a.get("reservationIds")),
            workdir=launch.workdir,
        ),
    ),
    _tool(
        "observeJob",
        lambda c, _l, a: c.job_observe(
            job_id=a.get("jobId"), status=a["status"], note=a.get("note")
        ),
        takes=("jobId", "status", "note"),
    ),
    _tool(
        "finishJob",
        lambda c, _l, a: c.job_finish(
            job_id=a.get("jobId"), exit_status=a["exitStatus"], note=a.get("note")
        ),
        takes=("jobId", "exitStatus", "note"),
    ),
    _plain("job"),
    _plain("recordEvidence"),
    # --- resources ------------------------------------------------------------------
    _plain("resources"),
    _tool(
        "acquireResources",
        lambda c, _l, a: c.resources_acquire(
            resources=[
                ResourceRequest(r["resourceId"], r.get("units") or 1)
                for r in _list(a.get("requests"))
            ],
            job_id=a.get("jobId"),
        ),
    ),
    _tool(
        "releaseResources",
        lambda c, _l, a: c.resources_release(
            reservation_ids=_list(a.get("reservationIds")), reason=a.get("reason") or ""
        ),
    ),
    # --- lessons and orientation ---------------------------------------------------------
    _tool(
        "searchKnowledge",
        lambda c, _l, a: c.search_lessons(
            query=a.get("query"),
            tags=_list(a.get("tags")),
            all_projects=a.get("scope") == "ALL_PROJECTS",
            first=a.get("first"),
            after=a.get("after"),
            project=a.get("projectId"),
        ),
    ),
    _tool(
        "publishLesson",
        lambda c, _l, a: c.learn(
            statement=a["statement"],
            explanation=a.get("explanation") or "",
            tags=_list(a.get("tags")),
            evidence=_list(a.get("evidence")),
            project=a.get("projectId"),
            task_id=a.get("taskId"),
            submission_id=a.get("submissionId"),
            candidate_revision=a.get("candidateRevision"),
        ),
    ),
    _tool(
        "orientation",
        lambda c, launch, a: c.orient(
            since_event=a.get("sinceEvent"),
            tags=_list(a.get("tags")),
            task_id=a.get("taskId"),
            all_projects=a.get("scope") == "ALL_PROJECTS",
            project=a.get("projectId"),
            workdir=launch.workdir,
        ),
        takes=("projectId", "sinceEvent", "tags", "taskId", "scope"),
    ),
)

TOOLS: Mapping[str, Tool] = MappingProxyType({tool.name: tool for tool in _TOOLS})

# Offered to agents but not as a tool here: the renewal helper (`hub agent watch`) opens
# and closes watch windows itself, around the long action it watches.
NOT_TOOLS = frozenset({"openWatchWindow", "closeWatchWindow"})
