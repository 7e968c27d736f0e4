"""The wire: JSON text and its framing, the JSON-RPC errors, and the codecs of both flavours of
models (decode errors, leniency, the dataclass codec; the pydantic flavour's base and errors).

It may import nothing else of the package: every other room stands on it.
"""
