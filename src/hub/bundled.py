"""The data folders hub ships: Alembic's migrations, the dashboard's templates and
static files, and the GraphQL operations every client sends with the schema they are
checked against (`hub.verbs`).

In the repository they sit at the top level (`migrations/`, `web/templates/`,
`web/static/`, `graphql/`), where whoever writes a migration, edits a page or copies an
operation finds them without reading Python. A built wheel carries copies inside the
package, under `hub/_data/` (the mapping is `force-include` in pyproject.toml), so an
installed hub (pip, pipx, uv tool, the container image) finds them through the package
wherever it is installed.
A checkout used in place (an editable install, or `src` on `PYTHONPATH`) has no such
copies and uses the top-level folders; this module is the one place that knows it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# src/hub/bundled.py -> the repository's top level, when running from a checkout.
_CHECKOUT = Path(__file__).resolve().parents[2]


class MissingDataError(RuntimeError):
    """An installation without its data folders: a packaging mistake, said plainly."""


def data_dir(relative: str) -> Path:
    """The folder `relative` (e.g. "migrations", "web/static") of this installation."""
    packaged = files("hub").joinpath("_data", *relative.split("/"))
    # Alembic, Jinja2 and StaticFiles read real directories, so a zipped install (where
    # `packaged` is not a filesystem path) is not supported.
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    in_checkout = _CHECKOUT / relative
    if (_CHECKOUT / "pyproject.toml").is_file() and in_checkout.is_dir():
        return in_checkout
    raise MissingDataError(
        f"hub's {relative!r} folder is missing from this installation "
        f"(looked in {packaged} and {in_checkout}); reinstall hub from a wheel"
    )
