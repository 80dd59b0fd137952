"""privasis-bench: an evaluation harness for instruction-following text sanitization."""

__version__ = "0.1.0"
