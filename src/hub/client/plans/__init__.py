"""Plans from files: one reader per format, each a generator of import items in the wire
format (docs/imports.md), read as they are needed so a file of any size is never held
whole (docs/import-formats.md says how each format maps to items).

    formats    `Plan.open(path, format, source_system)`: the format named or guessed,
               `Plan.items()` / `Plan.located()` the items (with their lines)
    items      the wire item's fields, `PlanFileError` (a file that does not read: the
               file, the line or item, and why), the source-id slug
    jsonfile   hub's own items as JSON Lines or a JSON array, streamed
    csvfile    CSV with a header row
    markdown   a Markdown checklist
    github     `gh issue list --json number,title,body,labels,state,url`
    beads      `.beads/issues.jsonl` of the bd tool

Client side: nothing here imports the server's modules.
"""

from hub.client.plans.formats import (
    DESCRIPTIONS,
    EXTENSIONS,
    Format,
    Plan,
    guess_format,
    known_formats,
    parse_format,
)
from hub.client.plans.items import (
    WIRE_FIELDS,
    Item,
    Located,
    PlanFileError,
    Warn,
)

__all__ = [
    "DESCRIPTIONS",
    "EXTENSIONS",
    "WIRE_FIELDS",
    "Format",
    "Item",
    "Located",
    "Plan",
    "PlanFileError",
    "Warn",
    "guess_format",
    "known_formats",
    "parse_format",
]
