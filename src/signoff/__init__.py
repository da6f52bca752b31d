"""signoff: a human in the loop of AI agents' tool calls."""

__version__ = "0.1.0"
