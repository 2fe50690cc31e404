"""`python -m jobguard`: the same CLI as the `jobguard` console script."""

from jobguard.app.cli.main import main

raise SystemExit(main())
