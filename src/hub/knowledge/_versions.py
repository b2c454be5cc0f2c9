"""Which versions a tag's constraints admit, and whether two tags can hold together.

A search's tag applies to a lesson's tag of the same component when some version meets
the constraints of both: `postgres==16` applies to `postgres>=15` and to `postgres`,
not to `postgres<12`. Versions compare by their numeric parts (`3.11` after `3.9`;
`15` equals `15.0`; letters after a number, as in `16rc1`, are ignored). `==4.*` admits
the 4 series, `~=3.11` the versions from 3.11 before 4. A constraint on a version with
no number in it is not compared: it admits every version (docs/design.md, "Knowledge").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PARTS = 8
_CONSTRAINT = re.compile(r"(>=|<=|==|!=|~=|>|<)(.+)")
_LEADING_DIGITS = re.compile(r"\d+")

Version = tuple[int, ...]


@dataclass(frozen=True)
class _Bound:
    version: Version
    inclusive: bool


@dataclass
class _Range:
    """Versions from `low` to `high` (None: unbounded), without those `excluded`."""

    low: _Bound | None = None
    high: _Bound | None = None
    excluded: set[Version] = field(default_factory=set)

    def raise_low(self, bound: _Bound) -> None:
        if self.low is None or (bound.version, not bound.inclusive) > (
            self.low.version,
            not self.low.inclusive,
        ):
            self.low = bound

    def lower_high(self, bound: _Bound) -> None:
        if self.high is None or (bound.version, bound.inclusive) < (
            self.high.version,
            self.high.inclusive,
        ):
            self.high = bound

    def empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        if self.low.version != self.high.version:
            return self.low.version > self.high.version
        both_inclusive = self.low.inclusive and self.high.inclusive
        return not both_inclusive or self.low.version in self.excluded


def compatible(first: str, second: str) -> bool:
    """Whether some version meets both constraint lists (`>=15`, `>=3.11,<3.13`; "" is
    every version)."""
    admitted = _Range()
    for constraints in (first, second):
        for constraint in filter(None, constraints.split(",")):
            _narrow(admitted, constraint)
    return not admitted.empty()


def _narrow(admitted: _Range, constraint: str) -> None:
    found = _CONSTRAINT.fullmatch(constraint)
    if found is None:
        return
    operator, written = found.groups()
    wildcard = written.endswith(".*")
    parts = _numbers(written.removesuffix(".*"))
    if not parts:
        return
    version = _padded(parts)
    if operator == "==" and wildcard:
        admitted.raise_low(_Bound(version, True))
        admitted.lower_high(_Bound(_next(parts), False))
    elif wildcard:
        return  # only == takes a wildcard
    elif operator == "==":
        admitted.raise_low(_Bound(version, True))
        admitted.lower_high(_Bound(version, True))
    elif operator == "!=":
        admitted.excluded.add(version)
    elif operator == "~=":
        admitted.raise_low(_Bound(version, True))
        if len(parts) > 1:
            admitted.lower_high(_Bound(_next(parts[:-1]), False))
    elif operator.startswith(">"):
        admitted.raise_low(_Bound(version, operator == ">="))
    else:
        admitted.lower_high(_Bound(version, operator == "<="))


def _numbers(written: str) -> Version:
    """The numeric parts, up to the first part that does not start with a digit."""
    parts: list[int] = []
    for part in written.split("."):
        digits = _LEADING_DIGITS.match(part)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts[:_PARTS])


def _padded(parts: Version) -> Version:
    return parts + (0,) * (_PARTS - len(parts))


def _next(parts: Version) -> Version:
    """The first version after the series `parts` names (`4` -> 5, `3.11` -> 3.12)."""
    return _padded((*parts[:-1], parts[-1] + 1))
