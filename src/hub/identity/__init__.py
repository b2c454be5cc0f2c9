"""Identity: principals, API tokens, agent sessions and the actor behind each request."""
