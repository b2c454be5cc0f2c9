"""work over GraphQL: tasks, dependencies, claims, leases, submissions, recovery, adapter
events."""
