"""The event log: every state change appends an event in the same transaction.

Events are numbered densely per stream (a project's id, or `hub` for events that
belong to no project), so a reader that resumes `after` a sequence number can see
that it has missed nothing.
"""
