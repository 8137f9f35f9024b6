"""Tools: typed functions the model can call, and the `Toolkit` that runs them.

`@tool` turns a typed function with a Google-style docstring into a `Tool` with a JSON schema;
`Toolkit.execute` validates the model's arguments with pydantic, injects dependencies by type,
runs the tool (sync tools in a worker thread) under a timeout, and turns every outcome, failures
included, into a `ToolResultBlock`. See the tools guide in the docs.
"""

from rxagent.tools._inject import Injected as Injected
from rxagent.tools._schema import parse_docstring as parse_docstring
from rxagent.tools._tool import Tool as Tool
from rxagent.tools._tool import tool as tool
from rxagent.tools._toolkit import Toolkit as Toolkit
from rxagent.tools._toolkit import ToolOutcome as ToolOutcome

__all__ = [
    "Injected",
    "Tool",
    "ToolOutcome",
    "Toolkit",
    "parse_docstring",
    "tool",
]
