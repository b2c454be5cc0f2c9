"""Work: tasks, dependencies, attempts, leases, submissions and recovery."""
