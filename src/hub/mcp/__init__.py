"""The agent's verbs as MCP tools on the agent's workstation (`hub agent mcp`).

    tools     one `Tool` per verb of `hub.verbs`: its description for a model, the JSON
              Schema of what the caller gives, and the agent client's call that runs it
              (the command line's own), with what `hub agent mcp` was started with
              (`Launch`: the hub, the token that opens sessions, the harness)
    results   a call's answer as a tool result: the client's result as JSON, or a typed
              problem or local refusal with what to do about it
    calls     one call: its arguments checked, the client's call, the answer shaped
    launch    how `hub agent mcp` was started, read before anything else is imported
    stdio     the MCP server over standard input and output (the official SDK); it
              loads `calls`, and with it the agent client, at the first call

The same verbs are served over streamable HTTP by the hub server itself, at `/mcp`
(`hub.api.mcp_http`), for clients that cannot start a local process. Nothing here
imports the server's modules: an import-linter contract in pyproject.toml keeps it so.
"""
