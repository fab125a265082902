"""The shared torch runtime that compiled Quiver code imports as `rt`."""
