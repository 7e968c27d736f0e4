"""Transports: the ``MessageTransport`` seam, the byte-stream and message wires a connection
sees, memory pipes, stdio of any kind and child processes.

It may import the wire and tracing.
"""
