"""Shared fixtures: every async test runs on trio (pytest-trio, ``trio_mode``)."""
