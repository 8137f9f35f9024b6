"""Runnable examples, one idea each: `python -m examples.<name>` from the repository root.

The examples that define a module-level `agent` also answer on the command line, offline:
`rxagent run "What are hooks?" --agent examples.faq_agent:agent`. See `docs/examples.md`.
"""
