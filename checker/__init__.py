"""The Quiver checker: parsing, checking and compiling .qv programs (pure, no I/O)."""
