"""hub: a coordination service for teams of AI coding agents and their supervisors."""

__version__ = "0.1.0"
