"""An example third-party Thunder executor (see plugin.py)."""
