"""An agent that runs offline for any prompt: one tool, and a model that is a plain function.

`FunctionModel` calls your function with each request and streams what it returns, so the agent
needs no network and no API key. This one looks the question's topic up with the `lookup` tool,
then answers with what the tool found. Swap the model for `"openai:gpt-4o-mini"` and nothing
else changes.

Run it:

    python -m examples.faq_agent
    rxagent run "What are hooks?" --agent examples.faq_agent:agent
"""

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema, tool
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["agent", "answer", "lookup", "main"]

NOTES = {
    "hook": "Hooks run in priority order on each event of a run, and may rewrite the event.",
    "event": "Every run is a stream of typed, frozen events, from PreCall to PostCall.",
    "tool": "A @tool is a typed function; its arguments are validated before it runs.",
    "session": "Sessions keep the conversation in a store: memory, SQLite, Postgres or Redis.",
}


@tool
def lookup(topic: str) -> str:
    """Look a topic up in rxagent's notes.

    Args:
        topic: One word, such as "hooks" or "tools".
    """
    for key, note in NOTES.items():
        if key in topic.lower():
            return note
    return f"I have no note on {topic!r}. Ask about: {', '.join(NOTES)}."


def answer(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: call `lookup` on the question, then answer with its result."""
    last = messages[-1]
    if last.role == "tool":
        return f"In short: {last.tool_results[0].text}"
    words = [w.strip("?!.,:;'\"").lower() for w in last.text.split()] or ["rxagent"]
    if not tools:  # no tools left in this request: answer in text
        return f"You asked about {words[-1]}."
    topic = next((w for w in words if any(key in w for key in NOTES)), words[-1])
    return tool_call("lookup", topic=topic)


agent = ReActAgent(
    "faq", "You answer questions about rxagent.", FunctionModel(answer), tools=[lookup]
)


def main() -> None:
    """Ask one question and show the answer."""
    result = agent.call_sync("What are hooks?")
    assert result.ok, result.error
    assert result.tools_used == ("lookup",)
    print(result.text)


if __name__ == "__main__":
    main()
