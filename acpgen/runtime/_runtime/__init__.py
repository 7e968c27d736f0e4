"""The runtime of the package: ordinary Python with no schema-dependent text, in rooms by concept.

The rooms, lowest first (each may import its own and those before it): ``wire``, ``tracing``,
``transports``, ``connection``, ``remote``, ``versions``, ``inspector``, ``session``, ``kits``,
``stubs``. It is private: import the public modules at the package's root instead.
"""
