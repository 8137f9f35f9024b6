"""The offline demo behind `rxagent demo`: real tools, a model that reads the question, a live view.

- `calculator`: safe arithmetic (an `ast` whitelist, never `eval`).
- `search_docs`: keyword search over rxagent's Markdown docs and public docstrings.
- `word_count`: counts words.
- `cite_tool_results`: a PreReasoning hook that adds a system message (today's date, "cite tool
  results"), so the request shows `modified_by`.
- `DemoModel`: reads the latest user message (`Question`: its arithmetic and its docs keywords),
  calls the tools that apply in parallel, then composes the answer from the real tool results.
- `LiveEventView`: prints any run's events with `rich` as they arrive.

This package is private: the `rxagent demo` command and `rxagent.demo` are its interface.
"""

from rxagent._demo._agent import DEMO_EXPRESSION as DEMO_EXPRESSION
from rxagent._demo._agent import DEMO_QUERY as DEMO_QUERY
from rxagent._demo._agent import DEMO_QUESTION as DEMO_QUESTION
from rxagent._demo._agent import DemoModel as DemoModel
from rxagent._demo._agent import build_demo_agent as build_demo_agent
from rxagent._demo._agent import cite_tool_results as cite_tool_results
from rxagent._demo._agent import word_count as word_count
from rxagent._demo._answer import CAPABILITIES as CAPABILITIES
from rxagent._demo._answer import compose_answer as compose_answer
from rxagent._demo._answer import plan_turn as plan_turn
from rxagent._demo._calculator import calculator as calculator
from rxagent._demo._calculator import evaluate_arithmetic as evaluate_arithmetic
from rxagent._demo._calculator import format_number as format_number
from rxagent._demo._docsearch import DocHit as DocHit
from rxagent._demo._docsearch import DocSection as DocSection
from rxagent._demo._docsearch import find_docs_dir as find_docs_dir
from rxagent._demo._docsearch import load_corpus as load_corpus
from rxagent._demo._docsearch import search_docs as search_docs
from rxagent._demo._docsearch import search_sections as search_sections
from rxagent._demo._question import Question as Question
from rxagent._demo._question import docs_query as docs_query
from rxagent._demo._question import find_arithmetic as find_arithmetic
from rxagent._demo._view import LiveEventView as LiveEventView

__all__ = [
    "CAPABILITIES",
    "DEMO_EXPRESSION",
    "DEMO_QUERY",
    "DEMO_QUESTION",
    "DemoModel",
    "DocHit",
    "DocSection",
    "LiveEventView",
    "Question",
    "build_demo_agent",
    "calculator",
    "cite_tool_results",
    "compose_answer",
    "docs_query",
    "evaluate_arithmetic",
    "find_arithmetic",
    "find_docs_dir",
    "format_number",
    "load_corpus",
    "plan_turn",
    "search_docs",
    "search_sections",
    "word_count",
]
