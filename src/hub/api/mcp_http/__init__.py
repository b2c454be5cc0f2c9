"""The agent's verbs as MCP tools over streamable HTTP, at `/mcp` (docs/mcp-http.md).

    tools   the tool list (the verbs offered to agents, `hub.verbs`) and a call run as
            the verb's GraphQL operation through the API's own schema, its answer shaped
            into a tool result (a payload, or an error result saying what to do)
    route   `McpEndpoint`: the ASGI app at `/mcp` (a bearer token required) and the
            SDK's session manager, whose `run()` the application's lifespan enters

What is offered: every verb with `agent=True` except `startSession` and `endSession`.
The MCP client sends the bearer token it was configured with (a session's token, as
`startSession` returned it, or a personal token, for what the credential table lets a
personal token do), authenticated exactly as on `/graphql`; a token `startSession`
returned could not be used by that client, and `endSession` would cut off the connection
it was called on, so the session's life stays with whoever configured the client.
"""
