"""`python -m generalAgent` runs the same command as `generalagent`."""

from generalAgent.cli.app import main

main()
