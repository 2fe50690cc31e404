"""The exit codes of every `jobguard` command (each command's --help says what they mean for it)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    """Success: allowed, no deny-level violation, written, valid."""
    FINDINGS = 1
    """Denied, a deny-level violation, a certificate expired or expiring."""
    UNUSABLE = 2
    """Unusable input, configuration or arguments; an audit that could not run."""
    UNAVAILABLE = 3
    """serve: an address to listen on is in use or cannot be bound (the address is logged)."""
