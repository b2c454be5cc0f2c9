"""projects over GraphQL: projects, their repositories, aliases and policy revisions."""
