"""resources over GraphQL: definitions, all-or-nothing reservations, capacity readings,
recovery holds."""
