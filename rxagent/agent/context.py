"""`RunContext` and `current_run()`, as `rxagent.agent` has always offered them.

They live in the core module `rxagent.context`, below tools, hooks and model clients, which read
the current run too; this module keeps the older import path working.
"""

from rxagent.context import RunContext as RunContext
from rxagent.context import current_run as current_run
from rxagent.context import current_run_or_none as current_run_or_none

__all__ = ["RunContext", "current_run", "current_run_or_none"]
