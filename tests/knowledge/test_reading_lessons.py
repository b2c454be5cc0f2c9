"""Reading lessons as the dashboard lists them: a project's lessons in one state, newest
first, a page at a time; and, the other way round from a successor, the lessons one
replaces (docs/design.md, "Knowledge")."""

from __future__ import annotations

from typing import Any

import pytest

from hub.errors import NotFound
from hub.knowledge import service as knowledge
from hub.knowledge.vocabulary import LessonState
from hub.runtime import Runtime
from tests.support import knowledge as lessons
from tests.support import work


def test_current_lessons_are_listed_newest_first_a_page_at_a_time(
    operator: Any, runtime: Runtime
) -> None:
    project = work.create_project(operator.api)
    made = [lessons.published(operator.api, project, f"lesson {n}")["id"] for n in range(4)]
    replacement = lessons.published(operator.api, project, "lesson 4")["id"]
    assert lessons.supersede(operator.api, made[1], replacement)["__typename"] == "LessonPayload"

    def listed(after: str | None) -> list[str]:
        found = runtime.read(lambda uow: knowledge.list_lessons(
            uow, project, after=after, limit=2, state=LessonState.CURRENT, newest_first=True
        ))
        return [lesson.id for lesson in found]

    first = listed(None)
    assert first == [replacement, made[3]]
    assert listed(first[-1]) == [made[2], made[0]]  # the superseded one is left out
    assert listed(made[0]) == []
    # Without a state and order, the listing is as before: every state, oldest first.
    every = runtime.read(lambda uow: knowledge.list_lessons(uow, project))
    assert [lesson.id for lesson in every] == [*made, replacement]


def test_a_lesson_lists_the_lessons_it_replaces_in_any_project(
    operator: Any, runtime: Runtime
) -> None:
    here, there = work.create_project(operator.api), work.create_project(operator.api, "there")
    successor = lessons.published(operator.api, here, "The staging DB resets at 02:00 UTC")
    older = lessons.published(operator.api, here, "Reset the staging DB by hand")
    elsewhere = lessons.published(operator.api, there, "Reset staging before the demo")
    unrelated = lessons.published(operator.api, here, "Run the migrations first")
    for old in (older, elsewhere):
        assert lessons.supersede(operator.api, old["id"], successor["id"])["__typename"] == (
            "LessonPayload"
        )

    replaced = runtime.read(lambda uow: knowledge.superseded_lessons(uow, successor["id"]))
    assert [lesson.id for lesson in replaced] == [older["id"], elsewhere["id"]]
    assert {lesson.successor_id for lesson in replaced} == {successor["id"]}
    assert replaced[1].project_id == there
    assert runtime.read(lambda uow: knowledge.superseded_lessons(uow, unrelated["id"])) == []
    with pytest.raises(NotFound):
        runtime.read(lambda uow: knowledge.superseded_lessons(uow, "lsn_unknown"))
