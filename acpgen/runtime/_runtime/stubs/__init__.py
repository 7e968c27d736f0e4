"""The stub peers: the stub agents and clients, their sessions, the echo, the sandbox of the
files they touch, terminals, and the clients' command line.

It may import every room before it, its version's modules (``models``, ``agent``, ``client``,
``methods``, ``_stub_data``) and ``versions`` at the package's root. A version's own stubs
are under ``v<N>/_runtime/stubs/`` in a package of several versions.
"""
