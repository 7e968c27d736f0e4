"""The generated package's runtime: modules with no schema-dependent text.

They are ordinary source files, linted, type-checked and unit-tested here, and copied into every
generated package behind its header. acpgen itself never imports them, and they import nothing
from acpgen: a generated package stands alone.
"""
