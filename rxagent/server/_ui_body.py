"""The body of `POST /v1/agents/{name}/ui`: the AI SDK's `useChat` body, or rxagent's run body.

- `useChat` (its default `DefaultChatTransport`) sends `{id, messages, trigger, messageId, ...}`:
  the whole chat as `UIMessage`s. The session remembers the conversation, so only the last
  message is new input: it must be the user's. Its text parts become the input, and its image
  `file` parts become image blocks. The chat `id` is the session id.
- rxagent's own run body is `{"input": str | Msg | list[Msg], "session_id": str | null}`, as on
  `POST /v1/agents/{name}/runs`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rxagent.errors import ApiError
from rxagent.messages import Block, ImageBlock, Msg, TextBlock
from rxagent.server._schemas import SESSION_ID_PATTERN, RunInput

__all__ = ["UIMessageIn", "UIRunBody"]

_IGNORED_PARTS = frozenset({"step-start", "reasoning", "source-url", "source-document"})


class UIMessageIn(BaseModel):
    """A `UIMessage` as the AI SDK sends it (only what the server reads is checked)."""

    model_config = ConfigDict(extra="allow")

    id: str = ""
    """The client's message id; the user message keeps it in the session's memory."""
    role: Literal["system", "user", "assistant"]
    """Who wrote it."""
    parts: list[dict[str, Any]] = Field(default_factory=list)
    """Its parts: `{"type": "text", "text": ...}`, `{"type": "file", ...}`, tool parts, ..."""


class UIRunBody(BaseModel):
    """Either the AI SDK's `useChat` body (`messages`) or rxagent's run body (`input`).

    Other fields are allowed: `useChat` merges the caller's own `body` option into it.

    Example:
        ```python
        from rxagent.server._ui_body import UIRunBody

        body = UIRunBody.model_validate({
            "id": "chat-1",
            "trigger": "submit-message",
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}],
        })
        message, session_id = body.run_input()
        assert message.text == "Hi" and message.id == "m1" and session_id == "chat-1"
        assert UIRunBody(input="Hello").run_input() == ("Hello", None)
        ```
    """

    model_config = ConfigDict(extra="allow")

    id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    """The AI SDK chat id: the session id (unless `session_id` is given)."""
    messages: list[UIMessageIn] | None = None
    """The AI SDK chat, oldest first; the last message is the new input."""
    trigger: Literal["submit-message", "regenerate-message"] | None = None
    """Why `useChat` sent the request (both run the last user message)."""
    messageId: str | None = None
    """The message `useChat` regenerates, if any (not used)."""
    input: RunInput | None = None
    """rxagent's run input: a user text, a message, or a list of messages."""
    session_id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    """The session; None (and no chat `id`) gets a fresh one."""

    def run_input(self) -> tuple[str | Msg | list[Msg], str | None]:
        """Return the run's input and session id.

        Raises:
            ApiError: 422 `invalid_body`, naming the field, when neither or both shapes are
                given, or the last message is not a user message with text or images.
        """
        if self.messages is None:
            if self.input is None:
                raise ApiError(
                    422,
                    "invalid_body",
                    "the body needs `messages` (the AI SDK useChat body) or `input` (rxagent's "
                    "run body)",
                    field="messages",
                )
            return self.input, self.session_id
        if self.input is not None:
            raise ApiError(
                422,
                "invalid_body",
                "send either `messages` (the AI SDK useChat body) or `input`, not both",
                field="input",
            )
        return _last_user_message(self.messages), self.session_id or self.id


def _last_user_message(messages: list[UIMessageIn]) -> Msg:
    if not messages:
        raise ApiError(422, "invalid_body", "`messages` is empty", field="messages")
    position = len(messages) - 1
    last = messages[position]
    where = f"messages.{position}"
    if last.role != "user":
        raise ApiError(
            422,
            "invalid_body",
            f"the last message must be the user's new message, got role {last.role!r}; tools "
            "run on the server, so the client never sends tool results",
            field=f"{where}.role",
        )
    blocks = [_block(part, f"{where}.parts.{i}") for i, part in enumerate(last.parts)]
    content = [b for b in blocks if b is not None]
    if not content:
        raise ApiError(
            422,
            "invalid_body",
            "the last message has no text part (`{'type': 'text', 'text': ...}`)",
            field=f"{where}.parts",
        )
    if last.id:
        return Msg(role="user", content=content, id=last.id)
    return Msg(role="user", content=content)


def _block(part: dict[str, Any], where: str) -> Block | None:
    """A user message part as a content block; None for parts that carry no input."""
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise ApiError(422, "invalid_body", "a text part needs `text`", field=f"{where}.text")
        return TextBlock(text=text) if text else None
    if kind == "file":
        media_type, url = part.get("mediaType"), part.get("url")
        if not (isinstance(media_type, str) and media_type.startswith("image/")):
            raise ApiError(
                422,
                "invalid_body",
                f"only image files are accepted, got mediaType {media_type!r}",
                field=f"{where}.mediaType",
            )
        if not isinstance(url, str) or not url:
            raise ApiError(422, "invalid_body", "a file part needs `url`", field=f"{where}.url")
        return ImageBlock(url=url, media_type=media_type)
    if isinstance(kind, str) and (kind in _IGNORED_PARTS or kind.startswith("data-")):
        return None
    raise ApiError(
        422,
        "invalid_body",
        f"a user message part of type {kind!r} is not accepted; send text and image parts",
        field=f"{where}.type",
    )
