"""The flavours of ``models.py`` (``--models`` / ``models = "..."``), apart from the pydantic
flavour's renderer, so that naming them imports none of it."""

from __future__ import annotations

__all__ = ["FLAVOURS"]

#: The flavours of ``models.py``: ``--models`` / ``models = "..."``.
FLAVOURS = ("dataclasses", "pydantic")
