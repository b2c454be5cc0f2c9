"""Integration: serialized publishing into a target branch, and validation there."""
