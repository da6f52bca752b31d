"""The web inbox, JSON API and notifications (`signoff serve`); see docs/web.md."""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
