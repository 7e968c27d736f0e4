"""The connection and its JSON-RPC machinery: sending with back pressure, request tasks and
cancellation, the observer, batches, fast reading, the lifecycle, typed routes and proxies,
and ``_rpc``, the facade the generated modules import.

It may import the wire, tracing and transports.
"""
