"""Helpers for testing Terax and extensions built on it: a scripted model server."""
