"""Deprecated: `signoff.agent` moved to `signoff.llm`; this name goes in the next release."""

from ._moved import forward

__getattr__ = forward(__name__, "signoff.llm")
