"""Integration tests against real local model servers and engines."""
