"""The dependency picture: tasks and what they wait for, laid out and drawn as SVG.

Pure functions, nodes and edges in, an SVG string out, drawn on the server in Python
alone: hub runs wherever Python does (README, "Running it"), so a page cannot depend on
a system program such as Graphviz. The layout is a small layered one: each task one
layer below everything it waits for (longest-path layering of the "waits for" edges),
then a few barycenter passes that order each layer by the positions of its neighbours,
then straight edges with an arrowhead at the task waited for. A layer wider than
`MAX_COLUMNS` wraps onto more rows.

Everything a node shows is text from people and agents, so every piece of it is
escaped; each node is a link to its task's page, says its state in a word (colour is
never the only signal) and carries a `<title>` for hover. The dashboard's CSP allows no
inline style, so the picture uses presentation attributes only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

NODE_WIDTH = 184
NODE_HEIGHT = 46
COLUMN_GAP = 24
LAYER_GAP = 56
ROW_GAP = 16
MAX_COLUMNS = 10
MARGIN = 12
TITLE_CHARACTERS = 24
BARYCENTER_PASSES = 4

# Fill and outline per state: light fills, so the dark text reads on every one of them.
_COLOURS = {
    "OPEN": ("#e3f0ff", "#2f6db5"),
    "BLOCKED": ("#fde8cf", "#a65a00"),
    "IN_PROGRESS": ("#fff4bf", "#8a6d00"),
    "RECOVERY_CANDIDATE": ("#fbd9d9", "#a62626"),
    "AWAITING_REVIEW": ("#ece3fb", "#6a3fb5"),
    "AWAITING_INTEGRATION": ("#e0f4f4", "#1f7a7a"),
    "REVISION_NEEDED": ("#fbe0ee", "#a32e6b"),
    "DONE": ("#dff3e0", "#2e7d32"),
    "CLOSED": ("#ececec", "#616161"),
}
_UNKNOWN_COLOUR = ("#f5f5f5", "#555555")


@dataclass(frozen=True)
class Node:
    """A task in the picture. `state` is the word shown in the node."""

    id: str
    title: str
    state: str
    focus: bool = False  # the task whose page this is: drawn with a heavier outline


@dataclass(frozen=True)
class Edge:
    """`waiter` waits for `awaited`: a prerequisite, or a parent for a required child."""

    waiter: str
    awaited: str
    kind: str = "prerequisite"  # or "child": the waiter is the awaited task's parent


@dataclass(frozen=True)
class Placed:
    node: Node
    layer: int
    x: int
    y: int


@dataclass(frozen=True)
class Layout:
    placed: dict[str, Placed]
    edges: tuple[Edge, ...]  # those whose both ends are in the picture, self-edges dropped
    width: int
    height: int


def layout(nodes: Sequence[Node], edges: Iterable[Edge]) -> Layout:
    """Positions for every node: layers top to bottom (what is waited for above what
    waits), each layer ordered to keep edges short and crossings few."""
    by_id = {node.id: node for node in nodes}
    kept = tuple(
        dict.fromkeys(
            edge
            for edge in edges
            if edge.waiter in by_id and edge.awaited in by_id and edge.waiter != edge.awaited
        )
    )
    layer_of = _layers([node.id for node in nodes], kept)
    layers: dict[int, list[str]] = {}
    for node in nodes:
        layers.setdefault(layer_of[node.id], []).append(node.id)
    ordered = _order([layers[index] for index in sorted(layers)], kept, layer_of)
    # A layer wider than MAX_COLUMNS wraps onto further rows: a project of many
    # independent tasks stays a page that scrolls down, not a ribbon miles wide.
    rows = [
        (index, layer[start : start + MAX_COLUMNS])
        for index, layer in enumerate(ordered)
        for start in range(0, max(len(layer), 1), MAX_COLUMNS)
    ]
    widest = max((len(row) for _, row in rows), default=0)
    width = 2 * MARGIN + max(widest * NODE_WIDTH + (widest - 1) * COLUMN_GAP, 0)
    y = MARGIN
    placed: dict[str, Placed] = {}
    for place, (index, row) in enumerate(rows):
        if place > 0:
            # Rows of one layer sit closer together than the layers do.
            y += NODE_HEIGHT + (LAYER_GAP if rows[place - 1][0] != index else ROW_GAP)
        # Each row centred under the widest one.
        row_width = len(row) * NODE_WIDTH + (len(row) - 1) * COLUMN_GAP
        left = MARGIN + (width - 2 * MARGIN - row_width) // 2
        for column, node_id in enumerate(row):
            x = left + column * (NODE_WIDTH + COLUMN_GAP)
            placed[node_id] = Placed(by_id[node_id], index, x, y)
    height = y + NODE_HEIGHT + MARGIN if rows else 2 * MARGIN
    return Layout(placed, kept, width, height)


def _layers(node_ids: Sequence[str], edges: Sequence[Edge]) -> dict[str, int]:
    """Longest-path layering: a task sits one layer below the deepest task it waits for.

    The work module keeps prerequisites acyclic, but the picture mixes them with
    parent-child edges and must never loop: an edge that closes a cycle (found by the
    depth-first walk) is ignored for layering.
    """
    waits_for: dict[str, list[str]] = {node_id: [] for node_id in node_ids}
    for edge in edges:
        waits_for[edge.waiter].append(edge.awaited)
    layer: dict[str, int] = {}
    on_path: set[str] = set()
    for root in node_ids:
        if root in layer:
            continue
        # An explicit stack, not recursion: a long chain must not reach the recursion limit.
        stack: list[tuple[str, int]] = [(root, 0)]
        on_path.add(root)
        while stack:
            node_id, next_index = stack[-1]
            awaited = waits_for[node_id]
            if next_index < len(awaited):
                stack[-1] = (node_id, next_index + 1)
                child = awaited[next_index]
                if child not in layer and child not in on_path:
                    on_path.add(child)
                    stack.append((child, 0))
                continue
            stack.pop()
            on_path.discard(node_id)
            below = [layer[child] for child in awaited if child in layer]
            layer[node_id] = 1 + max(below) if below else 0
    return layer


def _order(
    layers: list[list[str]], edges: Sequence[Edge], layer_of: dict[str, int]
) -> list[list[str]]:
    """Barycenter ordering: each node moves to the mean position of its neighbours in
    the layer just swept, alternately downwards and upwards."""
    above: dict[str, list[str]] = {}
    below: dict[str, list[str]] = {}
    for edge in edges:
        if layer_of[edge.waiter] > layer_of[edge.awaited]:
            above.setdefault(edge.waiter, []).append(edge.awaited)
            below.setdefault(edge.awaited, []).append(edge.waiter)
    ordered = [list(layer) for layer in layers]
    position = {node_id: place for layer in ordered for place, node_id in enumerate(layer)}
    for sweep in range(BARYCENTER_PASSES):
        downwards = sweep % 2 == 0
        indices = range(1, len(ordered)) if downwards else range(len(ordered) - 2, -1, -1)
        neighbours = above if downwards else below
        for index in indices:
            current = ordered[index]
            weights = {
                node_id: _barycenter(node_id, place, neighbours, position)
                for place, node_id in enumerate(current)
            }
            ordered[index] = sorted(current, key=lambda node_id: weights[node_id])
            position.update((node_id, place) for place, node_id in enumerate(ordered[index]))
    return ordered


def _barycenter(
    node_id: str, place: int, neighbours: dict[str, list[str]], position: dict[str, int]
) -> float:
    # A node with no neighbour in the layer swept keeps its place.
    linked = [position[other] for other in neighbours.get(node_id, ())]
    return sum(linked) / len(linked) if linked else float(place)


def render_svg(
    nodes: Sequence[Node], edges: Iterable[Edge], *, label: str, id_prefix: str = "graph"
) -> str:
    """The picture as an SVG element to put inline in a page (its links stay clickable).

    `label` is its accessible name; `id_prefix` keeps its element ids apart from another
    picture's on the same page.
    """
    drawn = layout(nodes, edges)
    prefix = escape(id_prefix, quote=True)
    title_id = f"{prefix}-title"
    arrow_id = f"{prefix}-arrow"
    width = max(drawn.width, 2 * MARGIN)
    height = max(drawn.height, 2 * MARGIN)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="task-graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" aria-labelledby="{title_id}">',
        f'<title id="{title_id}">{escape(label)}</title>',
        "<defs>",
        f'<marker id="{arrow_id}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#444444"/></marker>',
        "</defs>",
        '<g class="edges">',
    ]
    for edge in drawn.edges:
        parts.append(_edge(drawn.placed[edge.waiter], drawn.placed[edge.awaited], edge, arrow_id))
    parts.append('</g><g class="nodes">')
    for placed in drawn.placed.values():
        parts.append(_node(placed))
    parts.append("</g></svg>")
    return "".join(parts)


def _edge(waiter: Placed, awaited: Placed, edge: Edge, arrow_id: str) -> str:
    # From the waiter's top edge to the bottom edge of what it waits for; a cycle's
    # closing edge (upwards, or within a layer) is drawn all the same.
    x1, y1 = waiter.x + NODE_WIDTH // 2, waiter.y
    x2, y2 = awaited.x + NODE_WIDTH // 2, awaited.y + NODE_HEIGHT
    if awaited.layer >= waiter.layer:
        y1, y2 = waiter.y + NODE_HEIGHT, awaited.y
    dash = ' stroke-dasharray="5 4"' if edge.kind == "child" else ""
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#444444" stroke-width="1.5"'
        f'{dash} marker-end="url(#{arrow_id})"><title>{escape(waiter.node.title)} waits for '
        f"{escape(awaited.node.title)} ({escape(edge.kind)})</title></line>"
    )


def _node(placed: Placed) -> str:
    node = placed.node
    fill, outline = _COLOURS.get(node.state, _UNKNOWN_COLOUR)
    href = escape(f"/tasks/{quote(node.id, safe='')}", quote=True)
    title = node.title
    if len(title) > TITLE_CHARACTERS:
        title = title[: TITLE_CHARACTERS - 1] + "…"
    hover = escape(f"{node.title} ({node.id}): {node.state}")
    state = node.state.replace("_", " ").lower()
    stroke_width = "3" if node.focus else "1.5"
    current = ' aria-current="page"' if node.focus else ""
    centre = placed.x + NODE_WIDTH // 2
    return (
        f'<a href="{href}" class="task-node"{current}>'
        f"<title>{hover}</title>"
        f'<rect x="{placed.x}" y="{placed.y}" width="{NODE_WIDTH}" height="{NODE_HEIGHT}" '
        f'rx="6" fill="{fill}" stroke="{outline}" stroke-width="{stroke_width}"/>'
        f'<text x="{centre}" y="{placed.y + 19}" text-anchor="middle" font-size="13" '
        f'fill="#1a1a1a">{escape(title)}</text>'
        f'<text x="{centre}" y="{placed.y + 36}" text-anchor="middle" font-size="11" '
        f'fill="#1a1a1a" font-weight="bold">{escape(state)}</text>'
        "</a>"
    )
