"""The error a user can fix: every layer raises it, the console prints its message in one line
and exits with 2 (``cli.main``)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value or option that the user must fix; the message says how."""
