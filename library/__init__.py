"""Quiver's own library, written in Quiver: `import nn` (library/nn.qv).

This package holds no Python: it only gives the .qv files a place in the
installed package, where the tools look for modules after the user's own
(driver/host.py, `library_folders`).
"""
