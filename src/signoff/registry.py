"""Deprecated: `signoff.registry` moved to `signoff.tools`; this name goes in the next release."""

from ._moved import forward

__getattr__ = forward(__name__, "signoff.tools")
