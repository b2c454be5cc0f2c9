"""Who may resolve a review finding.

A finding is cleared by its author (the principal of the review that raised it), an
operator, or a reviewer of a later submission of the same task. The contributors whose
work it blocks may clear MINOR and NOTE findings; for BLOCKER and MAJOR they only propose
a resolution, which leaves the finding unresolved. Anyone else is refused and nothing
changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.client import Api
from tests.support.review import findings, one_of_each_severity, resolve_finding, status
from tests.support.workflow import (
    Delivery,
    claim_integration,
    claim_review,
    deliver,
    human_review,
    review,
    sha,
)

SEVERITIES = ("BLOCKER", "MAJOR", "MINOR", "NOTE")
CLEARED, PROPOSED, REFUSED = "cleared", "proposed", "refused"
C, P, R = CLEARED, PROPOSED, REFUSED

# who -> outcome for a BLOCKER, MAJOR, MINOR and NOTE finding raised on the first
# submission, while the second (later) submission is under review.
TABLE = {
    "the author's review session": (C, C, C, C),
    "the author, with a personal token": (C, C, C, C),
    "an operator": (C, C, C, C),
    "the later submission's agent reviewer": (C, C, C, C),
    "a human who reviewed the later submission": (C, C, C, C),
    "the implementer's session": (P, P, C, C),
    "the implementer, with a personal token": (P, P, C, C),
    "an unrelated agent": (R, R, R, R),
    "an agent working in another project": (R, R, R, R),
    "an unrelated human": (R, R, R, R),
}


@dataclass
class Revised:
    """Findings raised on the first submission; the second is being reviewed."""

    first: Delivery
    second: Delivery
    finding: dict[str, str]  # severity -> id
    implementer: AgentSession
    author: AgentSession
    later_reviewer: AgentSession
    later_human: Principal


def revised(
    operator: Principal,
    agent: Callable[..., AgentSession],
    make_principal: Callable[..., Principal],
) -> Revised:
    project = work.create_project(operator.api)
    implementer, author, later_reviewer = agent(), agent(), agent()
    first = deliver(operator.api, implementer.api, project=project)
    claim = claim_review(author.api, project)
    rejected = review(
        author.api, claim["attempt"], first.submission, "REJECT", one_of_each_severity()
    )
    assert rejected["__typename"] == "ReviewPayload", rejected
    second = deliver(
        operator.api, implementer.api, project=project, repository=first.repository,
        task=first.task, candidate=sha("e"),
    )
    # The second submission's review task is held, not yet decided.
    assert claim_review(later_reviewer.api, project)["__typename"] == "ClaimPayload"
    later_human = make_principal(kind="human")
    assert human_review(later_human.api, second.submission)["__typename"] == "ReviewPayload"
    return Revised(
        first, second, {f["severity"]: f["id"] for f in rejected["review"]["findings"]},
        implementer, author, later_reviewer, later_human,
    )


def caller(
    who: str,
    case: Revised,
    operator: Principal,
    agent: Callable[..., AgentSession],
    make_principal: Callable[..., Principal],
) -> tuple[Api, str]:
    """The API client and principal id of `who`."""
    if who == "an agent working in another project":
        elsewhere = agent()
        other = work.create_project(operator.api, name="Elsewhere")
        work.claimed(elsewhere.api, other, work.new_task(operator.api, other))
        return elsewhere.api, elsewhere.principal.id
    sessions: dict[str, Callable[[], AgentSession]] = {
        "the author's review session": lambda: case.author,
        "the later submission's agent reviewer": lambda: case.later_reviewer,
        "the implementer's session": lambda: case.implementer,
        "an unrelated agent": agent,
    }
    if who in sessions:
        session = sessions[who]()
        return session.api, session.principal.id
    principals: dict[str, Callable[[], Principal]] = {
        "the author, with a personal token": lambda: case.author.principal,
        "an operator": lambda: operator,
        "a human who reviewed the later submission": lambda: case.later_human,
        "the implementer, with a personal token": lambda: case.implementer.principal,
        "an unrelated human": lambda: make_principal(kind="human"),
    }
    principal = principals[who]()
    return principal.api, principal.id


@pytest.mark.parametrize("who", list(TABLE))
def test_who_may_resolve_a_finding_of_each_severity(
    who: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    make_principal: Callable[..., Principal],
    clock: ManualClock,
) -> None:
    case = revised(operator, agent, make_principal)
    api, principal_id = caller(who, case, operator, agent, make_principal)
    before = findings(operator.api, case.second.submission)
    clock.advance(60)
    now = clock.now().isoformat()

    for severity, expected in zip(SEVERITIES, TABLE[who], strict=True):
        finding_id = case.finding[severity]
        evidence = [f"commit {sha('e')} fixes the {severity.lower()}"]
        result = resolve_finding(api, finding_id, f"{severity} addressed", evidence)
        after = findings(operator.api, case.second.submission)[finding_id]
        unresolved = status(operator.api, case.second.submission)["unresolvedRequiredFindings"]
        outcome = (severity, expected)
        if expected == REFUSED:
            assert result["__typename"] == "PermissionDenied", (outcome, result)
            assert after == before[finding_id], outcome
        elif expected == PROPOSED:
            assert result["finding"] == after, outcome
            assert after["resolvedAt"] is None and after["resolvedBy"] is None, outcome
            assert after["proposedResolution"] == f"{severity} addressed", outcome
            assert after["proposedEvidence"] == evidence, outcome
            assert (after["proposedBy"], after["proposedAt"]) == (principal_id, now), outcome
        else:
            assert result["finding"] == after, outcome
            assert after["resolution"] == f"{severity} addressed", outcome
            assert after["resolutionEvidence"] == evidence, outcome
            assert (after["resolvedBy"], after["resolvedAt"]) == (principal_id, now), outcome
        if severity in ("BLOCKER", "MAJOR"):
            assert (finding_id in unresolved) is (expected != CLEARED), outcome

    # Whatever was cleared or proposed, the second submission still waits for its review.
    assert work.task(operator.api, case.first.task)["state"] == "AWAITING_REVIEW"


def test_a_proposal_waits_for_the_author_whose_clearing_unblocks_integration(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    implementer, author = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    claim = claim_review(author.api, delivery.project)
    approved = review(
        author.api, claim["attempt"], delivery.submission, "APPROVE",
        [{"severity": "BLOCKER", "title": "retries charge twice", "remedy": "key the charge"}],
    )
    blocker = approved["review"]["findings"][0]["id"]
    assert approved["status"]["approved"] is True
    assert approved["status"]["unresolvedRequiredFindings"] == [blocker]

    proposed = resolve_finding(implementer.api, blocker, "charges are keyed", [sha("b")])
    assert proposed["finding"]["proposedBy"] == implementer.principal.id
    assert proposed["finding"]["resolvedAt"] is None
    assert status(operator.api, delivery.submission)["unresolvedRequiredFindings"] == [blocker]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
    assert claim_integration(agent().api, delivery.submission)["__typename"] == (
        "InvalidTransition"
    )

    cleared = resolve_finding(author.api, blocker, "verified: the charge is keyed", [sha("b")])
    assert cleared["finding"]["resolvedBy"] == author.principal.id
    assert cleared["finding"]["proposedBy"] == implementer.principal.id  # kept as history
    after = status(operator.api, delivery.submission)
    assert (after["unresolvedRequiredFindings"], after["readyForIntegration"]) == ([], True)
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"
    assert claim_integration(agent().api, delivery.submission)["__typename"] == (
        "ClaimIntegrationPayload"
    )


def test_a_resolved_finding_is_returned_unchanged_and_still_refused_to_others(
    operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    implementer, author = agent(), agent()
    delivery = deliver(operator.api, implementer.api)
    claim = claim_review(author.api, delivery.project)
    rejected = review(
        author.api, claim["attempt"], delivery.submission, "REJECT", one_of_each_severity()
    )
    blocker = next(f["id"] for f in rejected["review"]["findings"] if f["severity"] == "BLOCKER")
    first = resolve_finding(operator.api, blocker, "fixed by the operator", [sha("c")])
    assert first["__typename"] == "ResolveFindingPayload", first

    clock.advance(60)
    again = resolve_finding(author.api, blocker, "fixed again", [sha("d")])
    assert again["finding"] == first["finding"]
    stranger: dict[str, Any] = resolve_finding(agent().api, blocker, "me too", [sha("d")])
    assert stranger["__typename"] == "PermissionDenied", stranger
    assert findings(operator.api, delivery.submission)[blocker] == first["finding"]


def test_an_unknown_finding_is_not_found(operator: Principal) -> None:
    missing = resolve_finding(operator.api, "fnd_01jzzzzzzzzzzzzzzzzzzzzzzz", "x", ["y"])
    assert missing["__typename"] == "NotFound", missing
