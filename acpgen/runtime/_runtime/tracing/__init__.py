"""Tracing: trace context carried in ``_meta``, and spans where OpenTelemetry's API is installed.

It may import the wire.
"""
