"""Deprecated: `signoff.stats` moved to `signoff.audit.stats`;
this name goes in the next release."""

from ._moved import forward

__getattr__ = forward(__name__, "signoff.audit.stats")
