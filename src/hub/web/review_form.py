"""The human decision form on the submission page: its fields, read back and re-shown.

Plain HTML that works without JavaScript. Findings are a repeatable fieldset named
`findings-<n>-<field>`; "Add another finding" posts the form back and the page comes
back with the values kept and one more empty fieldset (HTMX swaps just the fieldsets
in). A fieldset left entirely blank is not a finding. Every rule about what a decision
must contain (a rejection names a finding, a finding has a remedy, the severities)
belongs to `hub.review.service`; this module only carries its refusal back to the
field it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from starlette.datastructures import FormData

from hub.errors import HubError, PermissionDenied, ValidationFailed
from hub.review import service as review

ADD_FINDING = "add-finding"
# Matches the service's own limit; the form stops offering more fieldsets there.
MAX_FINDING_ROWS = 100
_ROW_FIELD = re.compile(r"^findings-(\d{1,3})-(severity|title|remedy|detail)$")
_SERVICE_FINDING_FIELD = re.compile(r"^findings\[(\d+)\]\.(\w+)$")


@dataclass(frozen=True)
class FindingFields:
    severity: str = ""
    title: str = ""
    remedy: str = ""
    detail: str = ""

    @property
    def blank(self) -> bool:
        return not (self.title or self.remedy or self.detail)


@dataclass(frozen=True)
class Refusal:
    """Why the service refused the decision, and which field it points at."""

    message: str
    anchor: str | None  # the id of the form control to point at, when there is one


@dataclass(frozen=True)
class DecisionForm:
    decision: str = ""
    summary: str = ""
    evidence: str = ""  # one reference per line
    findings: tuple[FindingFields, ...] = (FindingFields(),)
    intent: str = "record"
    refusal: Refusal | None = None

    @classmethod
    def read(cls, form: FormData) -> DecisionForm:
        rows: dict[int, dict[str, str]] = {}
        for key, value in form.multi_items():
            found = _ROW_FIELD.match(key)
            if found and isinstance(value, str):
                rows.setdefault(int(found.group(1)), {})[found.group(2)] = value.strip()
        findings = tuple(FindingFields(**rows[index]) for index in sorted(rows))
        return cls(
            decision=_text(form, "decision"),
            summary=_text(form, "summary"),
            evidence=_text(form, "evidence"),
            findings=findings or (FindingFields(),),
            intent=_text(form, "intent") or "record",
        )

    @property
    def adds_finding(self) -> bool:
        return self.intent == ADD_FINDING

    @property
    def can_add_finding(self) -> bool:
        return len(self.findings) < MAX_FINDING_ROWS

    def with_another_finding(self) -> DecisionForm:
        if not self.can_add_finding:
            return self
        return replace(self, findings=(*self.findings, FindingFields()))

    def decision_for(self, submission_id: str) -> review.ReviewDecision:
        return review.ReviewDecision(
            submission_id=submission_id,
            decision=self.decision,
            summary=self.summary,
            findings=[
                review.NewFinding(row.severity, row.title, row.remedy, row.detail)
                for row in self._filled()
            ],
            evidence=[line.strip() for line in self.evidence.splitlines() if line.strip()],
        )

    def refused(self, error: HubError) -> DecisionForm:
        return replace(self, refusal=self._refusal(error))

    def _filled(self) -> list[FindingFields]:
        return [row for row in self.findings if not row.blank]

    def _refusal(self, error: HubError) -> Refusal:
        if not isinstance(error, ValidationFailed):
            return Refusal(error.message, None)
        message = error.message.removeprefix(f"{error.field}: ")
        found = _SERVICE_FINDING_FIELD.match(error.field)
        if found:
            # The service numbers the findings it was given; blank fieldsets were skipped.
            position, part = int(found.group(1)), found.group(2)
            filled = [index for index, row in enumerate(self.findings) if not row.blank]
            if position < len(filled):
                row = filled[position]
                return Refusal(f"Finding {row + 1}, {part}: {message}", f"finding-{row}-{part}")
        labels = {"decision": "Decision", "summary": "Summary", "evidence": "Evidence",
                  "findings": "Findings"}
        if error.field in labels:
            anchor = {"decision": "decision-approve", "findings": "finding-0-title"}.get(
                error.field, error.field
            )
            return Refusal(f"{labels[error.field]}: {message}", anchor)
        return Refusal(error.message, None)


def refusal_status(error: HubError) -> int:
    """The HTTP status a refused decision is shown with."""
    if isinstance(error, ValidationFailed):
        return 422
    if isinstance(error, PermissionDenied):
        return 403
    # Conflict (an obsolete submission) and any other refusal: the state moved on.
    return 409


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""
