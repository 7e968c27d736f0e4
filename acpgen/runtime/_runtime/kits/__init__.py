"""The conformance kits: the agent kit (a raw JSON-RPC peer, its checks, its command line), the
client kit (a stub agent's checking mode: the requirements, the probes, the serving) and
their report.

It may import the rooms before it; never a version's own modules.
"""
