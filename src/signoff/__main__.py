"""`python -m signoff` is the `signoff` command."""

from .cli.app import main

raise SystemExit(main())
