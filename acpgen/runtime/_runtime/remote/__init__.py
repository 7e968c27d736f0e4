"""Remote serving and connecting: who may connect, one Streamable HTTP connection, a request's
ASGI events, server-sent events, the ASGI app, the WebSocket and HTTP clients, and a stub
agent's ``--listen``.

It may import the wire, tracing, transports and the connection.
"""
