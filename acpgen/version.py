"""acpgen's version: every generated file's header names it."""

__version__ = "0.1.0"
