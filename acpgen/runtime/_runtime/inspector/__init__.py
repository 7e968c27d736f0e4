"""The inspector's machinery: the checks of a transcript and the page of a session (the public
face is ``inspect.py`` at the package's root).

It may import the rooms before it: the wire to versions.
"""
