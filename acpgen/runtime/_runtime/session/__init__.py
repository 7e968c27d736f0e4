"""Session state: what a client keeps of a session from its updates (the tool-call tracker, the
state of a draft whose turns end through updates), which ``session.py`` runs.

It may import the rooms before it, and its version's ``_session_data`` and ``_stub_data``.
In a package of several versions each version has its own copy, under ``v<N>/_runtime/``.
"""
