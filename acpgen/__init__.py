"""acpgen: generate Python bindings for the Agent Client Protocol from its JSON Schema."""

__version__ = "0.1.0"
