"""Deprecated: `signoff.fake_openai` moved to `signoff.llm.fake_server` (also for
`python -m`); this name goes in the next release."""

from ._moved import forward

__getattr__ = forward(__name__, "signoff.llm.fake_server")

if __name__ == "__main__":
    import sys
    import warnings

    from .llm.fake_server import main

    warnings.warn("run python -m signoff.llm.fake_server", DeprecationWarning, stacklevel=1)
    sys.exit(main())
