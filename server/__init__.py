"""The Quiver language server (pygls)."""
