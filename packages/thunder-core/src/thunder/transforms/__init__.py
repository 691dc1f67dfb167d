"""Trace transforms, one module each. Every transform takes a trace and returns a new one whose
provenance says what was done and how long it took."""
