"""The command line: parse options, call the library, report. Only this package writes files.

Each module adds its commands to the group in :mod:`.base`: :mod:`.generating` (``methods``,
``generate``), :mod:`.checking` (``check``), :mod:`.diffing` (``diff``), :mod:`.validating` (``validate``).
The group imports a command's module when the command is run or listed (``base.COMMANDS``), so a
command imports only what it uses.
"""

from __future__ import annotations

from .base import main

__all__ = ["main"]
