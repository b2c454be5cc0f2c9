"""Applicability tags: a component name, optionally with version constraints.

`pytest`, `postgres>=15`, `python>=3.11,<3.13`, `django==4.*`. The component is
lower-cased (component names are compared without case); the constraints follow it with
no spaces, each an operator (`>=`, `<=`, `==`, `!=`, `~=`, `>`, `<`) and a version.
Nothing else is a tag: a refusal says what is wrong and shows the syntax
(docs/design.md, "Knowledge").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hub.errors import ValidationFailed
from hub.knowledge._versions import compatible

MAX_TAGS = 20
MAX_TAG_LENGTH = 200
_COMPONENT = r"[a-z0-9@][a-z0-9._+/@-]{0,79}"
_CONSTRAINT = r"(?:>=|<=|==|!=|~=|>|<)[0-9a-z][0-9a-z.*+-]{0,39}"
_TAG = re.compile(rf"(?P<component>{_COMPONENT})(?P<versions>{_CONSTRAINT}(?:,{_CONSTRAINT})*)?")
_EXAMPLES = "e.g. pytest, postgres>=15, python>=3.11,<3.13"


@dataclass(frozen=True)
class Tag:
    component: str
    versions: str  # "" applies to every version

    def __str__(self) -> str:
        return f"{self.component}{self.versions}"

    def applies_with(self, other: Tag) -> bool:
        """One component, and some version both tags' constraints admit (`_versions`)."""
        return self.component == other.component and compatible(self.versions, other.versions)


def parse_tag(field: str, raw: str) -> Tag:
    text = raw.strip()
    if not text:
        raise ValidationFailed(field, "must not be empty")
    if len(text) > MAX_TAG_LENGTH:
        raise ValidationFailed(field, f"must be at most {MAX_TAG_LENGTH} characters")
    if any(ch.isspace() for ch in text):
        raise ValidationFailed(
            field, f"{raw!r} has a space: write a tag without spaces ({_EXAMPLES})"
        )
    found = _TAG.fullmatch(text.lower())
    if found is None:
        raise ValidationFailed(
            field,
            f"{raw!r} is not a tag: a component name, optionally followed by version "
            f"constraints ({_EXAMPLES})",
        )
    return Tag(found["component"], found["versions"] or "")


def parse_tags(field: str, values: Sequence[str]) -> list[Tag]:
    """Tags as given, each component once (`postgres>=12,<15`, not two postgres tags)."""
    if len(values) > MAX_TAGS:
        raise ValidationFailed(field, f"must have at most {MAX_TAGS} items")
    tags: list[Tag] = []
    for index, raw in enumerate(values):
        tag = parse_tag(f"{field}[{index}]", raw)
        if any(seen.component == tag.component for seen in tags):
            raise ValidationFailed(
                f"{field}[{index}]",
                f"{tag.component} is tagged twice: join its constraints in one tag "
                f"({tag.component}>=1,<2)",
            )
        tags.append(tag)
    return tags
