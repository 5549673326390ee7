"""Workspace roots: list them, and add or remove a user root by an explicit, audited action."""
