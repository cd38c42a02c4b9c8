"""`python -m medground.cli …`: the same app as the `medground` command."""

from medground.cli import main

main()
