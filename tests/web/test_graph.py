"""The dependency picture's layout and drawing (`hub.web.graph`): pure functions."""

from __future__ import annotations

import random
import time
import xml.etree.ElementTree as ElementTree

from hub.web.graph import (
    COLUMN_GAP,
    MARGIN,
    MAX_COLUMNS,
    NODE_HEIGHT,
    NODE_WIDTH,
    Edge,
    Node,
    layout,
    render_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def chain(length: int) -> tuple[list[Node], list[Edge]]:
    nodes = [Node(f"tsk_{index}", f"Task {index}", "OPEN") for index in range(length)]
    edges = [Edge(f"tsk_{index + 1}", f"tsk_{index}") for index in range(length - 1)]
    return nodes, edges


def test_what_is_waited_for_sits_above_what_waits() -> None:
    nodes = [Node("a", "A", "DONE"), Node("b", "B", "OPEN"), Node("c", "C", "BLOCKED")]
    edges = [Edge("c", "b"), Edge("b", "a"), Edge("c", "a")]
    placed = layout(nodes, edges).placed
    # Longest path: c waits for b, which waits for a, so c is two layers down.
    assert [placed[n].layer for n in "abc"] == [0, 1, 2]
    assert placed["a"].y < placed["b"].y < placed["c"].y


def test_a_cycle_never_loops_and_every_node_is_placed() -> None:
    nodes = [Node(n, n, "OPEN") for n in "abc"]
    edges = [Edge("a", "b"), Edge("b", "c"), Edge("c", "a"), Edge("a", "a")]
    drawn = layout(nodes, edges)
    assert set(drawn.placed) == {"a", "b", "c"}
    assert Edge("a", "a") not in drawn.edges  # a self-edge is not drawn
    ElementTree.fromstring(render_svg(nodes, edges, label="cycle"))


def test_edges_to_tasks_outside_the_picture_are_dropped() -> None:
    drawn = layout([Node("a", "A", "OPEN")], [Edge("a", "elsewhere")])
    assert drawn.edges == ()


def test_barycenter_ordering_uncrosses_two_parallel_chains() -> None:
    # Laid out naively by id, x1 sits above y2 and y1 above x2: the edges cross.
    nodes = [Node(n, n, "OPEN") for n in ("x1", "y1", "y2", "x2")]
    edges = [Edge("x2", "x1"), Edge("y2", "y1")]
    placed = layout(nodes, edges).placed
    assert (placed["x1"].x < placed["y1"].x) == (placed["x2"].x < placed["y2"].x)


def test_nodes_never_overlap_in_a_300_node_graph_and_it_renders_quickly() -> None:
    rng = random.Random(15)
    nodes = [Node(f"tsk_{i:03}", f"Task number {i}", "OPEN") for i in range(300)]
    # Cycle-free: a task waits only for tasks with a smaller number.
    edges = [
        Edge(f"tsk_{i:03}", f"tsk_{rng.randrange(i):03}")
        for i in range(1, 300)
        for _ in range(rng.randint(1, 2))
    ]
    started = time.perf_counter()
    svg = render_svg(nodes, edges, label="Whole project")
    assert time.perf_counter() - started < 2.0
    drawn = layout(nodes, edges)
    assert len(drawn.placed) == 300
    boxes = {(p.x, p.y) for p in drawn.placed.values()}
    assert len(boxes) == 300
    for placed in drawn.placed.values():
        assert 0 <= placed.x <= drawn.width - NODE_WIDTH
        assert 0 <= placed.y <= drawn.height - NODE_HEIGHT
    for edge in drawn.edges:
        assert drawn.placed[edge.waiter].layer > drawn.placed[edge.awaited].layer
    root = ElementTree.fromstring(svg)
    assert len(root.findall(f".//{SVG}a")) == 300


def test_a_long_chain_does_not_reach_the_recursion_limit() -> None:
    nodes, edges = chain(3000)
    placed = layout(nodes, edges).placed
    assert placed["tsk_2999"].layer == 2999


def test_hostile_titles_are_escaped_everywhere() -> None:
    hostile = '<script>alert("x")</script> & \'quote\' "dq"'
    nodes = [
        Node("tsk_1", hostile, "OPEN", focus=True),
        Node('tsk_"><script>', hostile * 3, "DONE"),
    ]
    svg = render_svg(nodes, [Edge("tsk_1", 'tsk_"><script>')], label=hostile)
    assert "<script" not in svg
    root = ElementTree.fromstring(svg)  # well-formed XML: nothing broke out of a string
    texts = [element.text for element in root.iter(f"{SVG}title")]
    assert hostile in texts  # the accessible name, as given
    assert any(text and text.startswith(hostile) for text in texts)  # a node's hover title
    hrefs = [a.get("href") for a in root.iter(f"{SVG}a")]
    assert "/tasks/tsk_1" in hrefs
    assert "/tasks/tsk_%22%3E%3Cscript%3E" in hrefs


def test_each_node_links_to_its_task_and_says_its_state_in_words() -> None:
    nodes = [
        Node("tsk_a", "Write the parser", "RECOVERY_CANDIDATE"),
        Node("tsk_b", "A title far longer than a node has room for", "AWAITING_REVIEW"),
    ]
    root = ElementTree.fromstring(render_svg(nodes, [Edge("tsk_b", "tsk_a")], label="g"))
    links = {a.get("href"): a for a in root.iter(f"{SVG}a")}
    assert set(links) == {"/tasks/tsk_a", "/tasks/tsk_b"}
    words = ["".join(t.text or "" for t in a.iter(f"{SVG}text")) for a in links.values()]
    assert "recovery candidate" in words[0]
    assert "awaiting review" in words[1]
    assert "…" in words[1]  # shortened to fit; the hover title has it whole
    assert "style" not in ElementTree.tostring(root, encoding="unicode")  # the CSP forbids it


def test_a_wide_layer_wraps_onto_more_rows() -> None:
    nodes = [Node(f"tsk_{i:03}", f"Task {i}", "OPEN") for i in range(300)]
    drawn = layout(nodes, [])
    assert drawn.width == 2 * MARGIN + MAX_COLUMNS * NODE_WIDTH + (MAX_COLUMNS - 1) * COLUMN_GAP
    assert len({placed.y for placed in drawn.placed.values()}) == 300 // MAX_COLUMNS
    assert len({(p.x, p.y) for p in drawn.placed.values()}) == 300


def test_the_task_of_the_page_is_marked_current() -> None:
    svg = render_svg([Node("a", "A", "OPEN", focus=True), Node("b", "B", "OPEN")], [], label="g")
    root = ElementTree.fromstring(svg)
    current = [a.get("href") for a in root.iter(f"{SVG}a") if a.get("aria-current") == "page"]
    assert current == ["/tasks/a"]


def test_an_empty_picture_is_still_a_valid_svg() -> None:
    root = ElementTree.fromstring(render_svg([], [], label="nothing"))
    assert root.tag == f"{SVG}svg"
