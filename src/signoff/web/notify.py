"""Deprecated: `signoff.web.notify` moved to `signoff.notify` (it never served HTTP); this
name goes in the next release."""

from .._moved import forward

__getattr__ = forward(__name__, "signoff.notify")
