"""integration over GraphQL: serialized publishing of approved submissions, the reports
of what was published, and validation of the integrated result."""
