"""``acpgen diff``: what a new schema release changes on the wire and in the generated Python."""

from .changes import KINDS, Change
from .compare import diff_schemas

__all__ = ["KINDS", "Change", "diff_schemas"]
