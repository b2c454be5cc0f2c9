"""resources: scoped shared resources, all-or-nothing reservations, recovery holds."""
