"""Sections of the system prompt that memory hooks add to a request (never to session memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent.messages import Msg, TextBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["with_section"]


def with_section(messages: Sequence[Msg], section: str) -> list[Msg]:
    r"""Return `messages` with `section` appended to the system prompt.

    The system prompt is the first message when it is a system message; otherwise a system
    message holding only `section` is put first. The message keeps its id.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.memory._sections import with_section

        request = with_section([Msg.system("Be brief."), Msg.user("hi")], "[Memory]\n- likes tea")
        assert request[0].text == "Be brief.\n\n[Memory]\n- likes tea"
        assert with_section([Msg.user("hi")], "[Memory]")[0].text == "[Memory]"
        ```
    """
    if messages and messages[0].role == "system":
        first = messages[0]
        content = first.content
        joined = (
            (f"{content}\n\n{section}" if content else section)
            if isinstance(content, str)
            else [*content, TextBlock(text=f"\n\n{section}")]
        )
        updated = Msg(
            role="system", content=joined, name=first.name, metadata=first.metadata, id=first.id
        )
        return [updated, *messages[1:]]
    return [Msg.system(section), *messages]
