"""Quiver: the `quiver` package (load .qv files from Python; the command-line tools)."""
