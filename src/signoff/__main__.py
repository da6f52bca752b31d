"""`python -m signoff` is the `signoff` command."""

from .cli import main

raise SystemExit(main())
