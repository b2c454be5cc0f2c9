"""knowledge over GraphQL: lessons, their versions, disputes and votes; binding rules and
their delegations."""
