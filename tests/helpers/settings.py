"""A module whose attributes a jitted function reads (module-attribute provenance)."""

FACTOR = 2.0
ENABLED = True
