"""The exit codes of every command, in one place."""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK: Final = 0
# The work failed: the model's answer ended in an error, the proxy could not listen, the
# output could not be written (a full disk).
EXIT_FAILED: Final = 1
# A usage error: bad arguments, an unknown model, a missing API key, an empty prompt.
EXIT_USAGE: Final = 2
# Ended by Ctrl-C (the shell's convention for "ended by SIGINT").
EXIT_INTERRUPTED: Final = 130
