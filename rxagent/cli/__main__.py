"""`python -m rxagent.cli`: the `rxagent` command without the console script."""

from rxagent.cli import main

if __name__ == "__main__":  # pragma: no cover - run as a script
    raise SystemExit(main())
