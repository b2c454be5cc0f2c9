"""Imports: tasks brought in from another system by stable source id (docs/imports.md)."""
