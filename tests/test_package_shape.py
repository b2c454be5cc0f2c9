"""Every domain module has one shape (docs/architecture.md, "Layers and modules"): its
face is `service` (the operations), `views` (the values they return), `errors`,
`vocabulary` and `tables`; every other module of the package is private, named with a
leading underscore, and an import-linter contract keeps other packages out of it. This
test keeps a new module from slipping in with a public name."""

from __future__ import annotations

from pathlib import Path

import pytest

import hub

DOMAIN = (
    "identity", "projects", "work", "review", "integration", "jobs", "resources", "knowledge",
    "artifacts", "imports",
)
FACE = {"__init__", "service", "views", "errors", "vocabulary", "tables"}
REQUIRED = {"__init__", "service", "views", "errors", "tables"}


@pytest.mark.parametrize("module", DOMAIN)
def test_a_domain_module_shows_its_face_and_hides_the_rest(module: str) -> None:
    package = Path(hub.__file__).parent / module
    names = {path.stem for path in package.glob("*.py")}
    assert not (names - FACE - {n for n in names if n.startswith("_")}), (
        f"hub.{module}: a module that is not part of the face must be private (leading _)"
    )
    assert names >= REQUIRED, f"hub.{module} lacks {sorted(REQUIRED - names)}"


def test_the_verbs_show_their_face_in_their_init_alone() -> None:
    """`hub.verbs`, shared by the client and the server, is used through its `__init__`."""
    package = Path(hub.__file__).parent / "verbs"
    names = {path.stem for path in package.glob("*.py")}
    assert "__init__" in names
    assert all(n.startswith("_") for n in names), sorted(names)
