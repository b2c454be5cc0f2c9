"""jobs over GraphQL: external runs, their observations and evidence, watch windows
(reporter tokens)."""
