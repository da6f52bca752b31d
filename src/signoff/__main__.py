"""`python -m signoff` is the `signoff` command."""

from .cli.main import main

raise SystemExit(main())
