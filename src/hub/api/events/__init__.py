"""The event log over GraphQL: `events` (query) and `projectEvents` (subscription)."""
