"""The MCP tools stay in step with the verbs: every verb offered to agents is a tool (or
said not to be), described for a model, and the precomputed listing a harness reads at
start (`graphql/agent-tools.json`, written by `make schema`) is what the verbs give."""

from __future__ import annotations

from pathlib import Path

from hub.cli.mcp import STATE_ENV
from hub.client.state import STATE_ENV as CLIENT_STATE_ENV
from hub.mcp.calls import render_tool_list
from hub.mcp.stdio import TOOL_LIST
from hub.mcp.tools import NOT_TOOLS, TOOLS
from hub.verbs import VERBS, WHEN, problem_codes, remedy

LISTING = Path(__file__).resolve().parents[2] / "graphql" / TOOL_LIST


def test_every_agent_verb_is_a_tool() -> None:
    offered = {v.name for v in VERBS.values() if v.agent}
    assert offered == set(TOOLS) | NOT_TOOLS
    assert not set(TOOLS) & NOT_TOOLS


def test_every_tool_says_when_to_call_it_and_what_each_problem_means() -> None:
    for tool in TOOLS.values():
        text = tool.description()
        assert WHEN[tool.name] in text, tool.name
        for code in problem_codes(tool.verb):
            assert f"- {code}: {remedy(code)}" in text, (tool.name, code)


def test_a_tool_offers_only_what_its_call_honours() -> None:
    for tool in TOOLS.values():
        schema = tool.input_schema()
        assert set(schema["required"]) <= set(schema["properties"]), tool.name
        assert not set(tool.verb.filled) & set(schema["properties"]), tool.name


def test_the_precomputed_listing_is_current() -> None:
    assert LISTING.read_text(encoding="utf-8") == render_tool_list(), (
        "graphql/agent-tools.json is out of date: run `make schema`"
    )


def test_hub_agent_mcp_reads_the_state_file_variable_of_the_client() -> None:
    assert STATE_ENV == CLIENT_STATE_ENV
