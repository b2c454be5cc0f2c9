"""The `hub` command line: serve, database, administration, demo."""
