"""Versions: the router of several protocol versions on one connection (the public face is
``versions.py`` at the package's root).

It may import the wire, tracing, transports, the connection and remote.
"""
