"""Tools: typed functions the model can call, and the `Toolkit` that runs them.

`@tool` turns a typed function with a Google-style docstring into a `Tool` with a JSON schema;
`Toolkit.execute` validates the model's arguments with pydantic, injects dependencies by type,
runs the tool (sync tools in a worker thread) under a timeout, and turns every outcome, failures
included, into a `ToolResultBlock`. Generator tools stream progress; tool groups switch per
session; a `Toolset` (such as `rxagent.tools.mcp.MCPToolset`) provides tools with a lifecycle;
a `ToolSelector` chooses which tools one request offers. See the tools guide in the docs.
"""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.tools._groups import GroupChange as GroupChange
    from rxagent.tools._inject import Injected as Injected
    from rxagent.tools._inject import SessionId as SessionId
    from rxagent.tools._outcome import ToolOutcome as ToolOutcome
    from rxagent.tools._result import ToolResult as ToolResult
    from rxagent.tools._selection import AllTools as AllTools
    from rxagent.tools._selection import EmbeddingSelector as EmbeddingSelector
    from rxagent.tools._selection import KeywordSelector as KeywordSelector
    from rxagent.tools._selection import ToolSelector as ToolSelector
    from rxagent.tools._selection import keywords as keywords
    from rxagent.tools._selection import latest_user_text as latest_user_text
    from rxagent.tools._tool import Tool as Tool
    from rxagent.tools._tool import tool as tool
    from rxagent.tools._toolkit import Toolkit as Toolkit
    from rxagent.tools._toolset import Toolset as Toolset


__all__ = [
    "AllTools",
    "EmbeddingSelector",
    "GroupChange",
    "Injected",
    "KeywordSelector",
    "SessionId",
    "Tool",
    "ToolOutcome",
    "ToolResult",
    "ToolSelector",
    "Toolkit",
    "Toolset",
    "keywords",
    "latest_user_text",
    "tool",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
