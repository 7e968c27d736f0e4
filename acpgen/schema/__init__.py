"""Layer 1, load: read a schema file, validate it against the draft 2020-12 meta-schema, check its
``$ref`` values. Every problem is a diagnostic naming its JSON pointer."""
