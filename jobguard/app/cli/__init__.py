"""The command line (`main`): `check` and its report, manifests read with their positions,
the rule reference."""
