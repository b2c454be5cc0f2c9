"""Does one GraphQL document select at least what another does?

Both are flattened into trees keyed by response name (a field's alias, else its name)
and by type condition (`... on ClaimPayload`), fragment spreads inlined; arguments are
not compared. `missing(document, wanted)` lists the paths `wanted` selects that
`document` does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import graphql

Tree = dict[str, "Tree"]


def tree(document: str) -> Tree:
    """The selections of a document's one operation (or of a bare `{ … }` selection set)."""
    parsed = graphql.parse(document)
    fragments = {
        d.name.value: d
        for d in parsed.definitions
        if isinstance(d, graphql.FragmentDefinitionNode)
    }
    (operation,) = [
        d for d in parsed.definitions if isinstance(d, graphql.OperationDefinitionNode)
    ]
    return _flatten(operation.selection_set.selections, fragments)


def _flatten(
    selections: Iterable[graphql.SelectionNode],
    fragments: Mapping[str, graphql.FragmentDefinitionNode],
) -> Tree:
    flat: Tree = {}
    for selection in selections:
        if isinstance(selection, graphql.FieldNode):
            key = (selection.alias or selection.name).value
            inner = selection.selection_set.selections if selection.selection_set else ()
            _merge(flat.setdefault(key, {}), _flatten(inner, fragments))
        elif isinstance(selection, graphql.InlineFragmentNode):
            sub = _flatten(selection.selection_set.selections, fragments)
            if selection.type_condition is None:
                _merge(flat, sub)
            else:
                _merge(flat.setdefault(f"... on {selection.type_condition.name.value}", {}), sub)
        elif isinstance(selection, graphql.FragmentSpreadNode):
            spread = fragments[selection.name.value]
            _merge(flat, _flatten(spread.selection_set.selections, fragments))
    return flat


def _merge(into: Tree, more: Tree) -> None:
    for key, sub in more.items():
        _merge(into.setdefault(key, {}), sub)


def missing(document: str, wanted: str) -> list[str]:
    return _missing(tree(document), tree(wanted), "")


def _missing(have: Tree, want: Tree, where: str) -> list[str]:
    gaps = []
    for key, sub in want.items():
        path = f"{where}.{key}" if where else key
        if key not in have:
            gaps.append(path)
        else:
            gaps += _missing(have[key], sub, path)
    return gaps
