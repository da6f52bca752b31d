"""Deprecated: `signoff.runner` moved to `signoff.runs.runner`;
this name goes in the next release."""

from ._moved import forward

__getattr__ = forward(__name__, "signoff.runs.runner")
