"""What a client learns of a provider failure: its code and a request id; the log has the rest.

A provider's error text can hold what a client must not see: an `Authorization` header the
provider echoed, the address of an internal host (`Cannot connect to host 10.0.0.7:443`), the
provider's own account details. The server passes a model error on as its code and a generic
message with a request id, and logs the detail (redacted) under that id.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, Final

from rxagent.events import ErrorEvent, FallbackEvent, PostCallEvent, RetryEvent
from rxagent.messages import Msg

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.events import BaseEvent
    from rxagent.result import AgentResult, ErrorInfo

__all__ = ["PublicErrors", "public_message"]

logger: Final = logging.getLogger("rxagent.server")

_MODEL: Final = "model"


def public_message(code: str, request_id: str) -> str:
    """The message a client gets for a model failure.

    Example:
        ```python
        from rxagent.server._public import public_message

        assert public_message("PROVIDER_ERROR", "req-1") == (
            "the model provider failed (PROVIDER_ERROR); request id req-1 (the server log "
            "has the detail)"
        )
        ```
    """
    return (
        f"the model provider failed ({code}); request id {request_id} (the server log has "
        "the detail)"
    )


class PublicErrors:
    """Rewrite one run's model errors for clients, then pass each event to `observe`.

    An `ErrorEvent` of source `model`, a `RetryEvent` or `FallbackEvent` (a model request
    retried, or moved on to the next model, after a failure), and the failed result (and its
    "The run failed" reply) of the `PostCallEvent` that follows, carry `public_message` instead
    of the provider's text; the same failure gets the same request id in each. Other events
    pass unchanged.

    Args:
        observe: What sees the events next (the run's metrics observer).

    Example:
        ```python
        from rxagent import ErrorCode, ErrorEvent
        from rxagent.server._public import PublicErrors

        seen = []
        public = PublicErrors(seen.append)
        raw = ErrorEvent(code=ErrorCode.AUTH, message="openai HTTP 401: Bearer sk-...",
                         source="model", recoverable=False)
        shown = public(raw)
        assert shown is not None and "sk-" not in shown.message and seen == [shown]
        assert shown.message.startswith("the model provider failed (AUTH); request id req-")
        ```
    """

    __slots__ = ("_ids", "_observe")

    def __init__(self, observe: Callable[[BaseEvent], object]) -> None:
        self._observe = observe
        self._ids: dict[str, str] = {}  # a provider message -> its request id

    def _request_id(self, message: str, where: str) -> str:
        found = self._ids.get(message)
        if found is None:
            found = self._ids[message] = f"req-{uuid.uuid4().hex[:12]}"
            logger.warning("model failure %s (%s): %s", found, where, message)
        return found

    def _public(self, error: ErrorInfo, where: str) -> ErrorInfo:
        request_id = self._request_id(error.message, where)
        return error.model_copy(update={"message": public_message(error.code, request_id)})

    def __call__(self, event: BaseEvent) -> BaseEvent:
        """Observe `event` and return what the client sees of it."""
        shown = event
        if (isinstance(event, ErrorEvent) and event.source == _MODEL) or (
            isinstance(event, RetryEvent | FallbackEvent) and event.message
        ):
            where = f"run {event.run_id}, session {event.session_id!r}"
            request_id = self._request_id(event.message, where)
            shown = event.model_copy(update={"message": public_message(event.code, request_id)})
        elif isinstance(event, PostCallEvent):
            shown = self._post_call(event)
        self._observe(shown)
        return shown

    def _post_call(self, event: PostCallEvent) -> PostCallEvent:
        where = f"run {event.run_id}, session {event.session_id!r}"
        result = self.result(event.result, where)
        if result is event.result:
            return event
        return event.model_copy(update={"result": result, "reply": result.reply})

    def result(self, result: AgentResult[Any], where: str) -> AgentResult[Any]:
        """`result` as a client sees it: a model failure's text replaced (itself otherwise)."""
        error = result.error
        if error is None or error.source != _MODEL:
            return result
        public = self._public(error, where)
        update: dict[str, object] = {"error": public}
        reply = result.reply
        if reply.text == error.failure_text():  # the agent's reply quotes the provider's text
            update["reply"] = Msg.assistant(public.failure_text(), id=reply.id)
        return result.model_copy(update=update)
