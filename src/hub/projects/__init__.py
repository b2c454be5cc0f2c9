"""Projects: stable identity, repository bindings, aliases and the versioned policy."""
