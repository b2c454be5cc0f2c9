"""Artifacts: bounded uploads (logs, reports, screenshots) streamed into a pluggable
store, external links, safe downloads and previews, retention and deletion records
(docs/design.md, "Artifacts")."""
