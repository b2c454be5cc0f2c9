"""review over GraphQL: agents' and humans' decisions on submissions, findings, the
review queue, and an operator's re-pin of a submission's policy."""
