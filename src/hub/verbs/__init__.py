"""The verbs of hub's API, each defined once: a named GraphQL operation in a file.

Every operation a hub client sends (start a session, claim a task, renew its lease,
submit, review, integrate, register a job, publish a lesson, create a task…) is one file,
`graphql/operations/<name>.graphql`, holding one operation named after it (`claimTask`
runs `mutation ClaimTask`). The command line (`hub.client`), the MCP tools and the
harness hooks all send these same documents; nobody writes one out again.

    VERBS        every verb by name; `verb(name)` one of them (`UnknownVerb` otherwise)
    Verb         a verb: its `document` (the file, as sent), `kind`, root `field`,
                 `input_type`, `arguments`, `summary` (one line, from the schema), the JSON
                 Schema of its input (`input_schema()`, from the GraphQL input types) and
                 of what a caller gives (`tool_schema()`: without what a client fills in
                 itself, `filled`), and `variables(arguments)` to send it with
    Kind         query or mutation
    ALWAYS_FILLED  what a client fills in wherever an input has it (the idempotency key)
    api_schema   the API's GraphQL schema, built from `graphql/schema.graphql`
    description  a verb told to a model (the MCP tools): what it does, when to call it,
                 and each typed problem it may answer with and what to do about it;
                 `remedy(code)` that last part alone; `problem_types()` the schema's
                 problem types (`_guide`)

The files and `graphql/schema.graphql` (the exported SDL they are checked against) sit at
the repository's top level; a wheel carries them inside the package (`hub.bundled`).
This package needs nothing of hub's but `hub.bundled`, so the agent client and the
server both import it (an import-linter contract in pyproject.toml keeps it so), and it
parses nothing until asked: sending a document reads its file, no more.
"""

from hub.verbs._guide import (
    REMEDIES,
    WHEN,
    description,
    problem_codes,
    problem_types,
    remedy,
)
from hub.verbs._table import VERBS
from hub.verbs._verb import (
    ALWAYS_FILLED,
    Kind,
    UnknownVerb,
    Verb,
    api_schema,
    operations_dir,
)


def verb(name: str) -> Verb:
    try:
        return VERBS[name]
    except KeyError:
        raise UnknownVerb(f"{name!r} is no verb of hub.verbs.VERBS") from None


__all__ = [
    "ALWAYS_FILLED", "REMEDIES", "VERBS", "WHEN", "Kind", "UnknownVerb", "Verb", "api_schema",
    "description", "operations_dir", "problem_codes", "problem_types", "remedy",
    "verb",
]  # fmt: skip
