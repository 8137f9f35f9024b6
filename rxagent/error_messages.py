"""`ErrorMessages`: the text an end user reads in `result.text` when a run fails.

A failed run without an answer of its own replies with the text `ErrorMessages` gives for its
`ErrorCode`. The English defaults (`DEFAULT_ERROR_MESSAGES`) say what happened in words a user
can act on, and never quote the underlying error, which can hold a provider's account details
or an echoed credential: that stays in `result.error` and the logs, for developers.

Two ways to change them, per agent (`ReActAgent(error_messages=...)`):

- a mapping from code to template, for fixed texts or one language (`str.format` fields:
  `{code}`, `{message}`, `{source}`); codes it leaves out keep the English default;
- a function of the `ErrorInfo` and the `RunContext`, for a language chosen per run (from the
  run's deps or its principal, say); it returns None to use the mapping and the defaults.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, TypeAlias, final

from rxagent.errors import ConfigurationError, ErrorCode

if TYPE_CHECKING:
    from rxagent.context import RunContext
    from rxagent.result import ErrorInfo

__all__ = [
    "DEFAULT_ERROR_MESSAGES",
    "TEMPLATE_FIELDS",
    "ErrorMessages",
    "ErrorMessagesLike",
    "ErrorTextResolver",
]

logger: Final = logging.getLogger("rxagent.agent")

ErrorTextResolver: TypeAlias = Callable[["ErrorInfo", "RunContext"], "str | None"]
"""A function of a run's failure and its context: the user's text, or None for the default."""

ErrorMessagesLike: TypeAlias = (
    "ErrorMessages | Mapping[ErrorCode | str, str] | ErrorTextResolver | None"
)
"""What `ReActAgent(error_messages=...)` takes: see `ErrorMessages.of`."""

TEMPLATE_FIELDS: Final = frozenset({"code", "message", "source"})
"""The `str.format` fields a template may use (`{message}` quotes the error: mind secrets)."""

DEFAULT_ERROR_MESSAGES: Final[Mapping[ErrorCode, str]] = MappingProxyType(
    {
        ErrorCode.RATE_LIMITED: "The service is busy right now. Please try again in a moment.",
        ErrorCode.TIMEOUT: "This took too long and was stopped. Please try again.",
        ErrorCode.CONTEXT_TOO_LONG: (
            "This conversation is too long to continue. Please start a new one."
        ),
        ErrorCode.AUTH: (
            "The assistant could not sign in to its model provider. Please contact support."
        ),
        ErrorCode.INVALID_REQUEST: (
            "The request could not be processed. Please rephrase it and try again."
        ),
        ErrorCode.PROVIDER_ERROR: (
            "The model provider had a problem answering. Please try again later."
        ),
        ErrorCode.TOOL_ERROR: "A tool the assistant needed failed. Please try again later.",
        ErrorCode.TOOL_TIMEOUT: "A tool the assistant needed took too long. Please try again.",
        ErrorCode.GUARD_REJECTED: "Sorry, I can't help with that request.",
        ErrorCode.HOOK_REJECTED: "Sorry, this request was not allowed.",
        ErrorCode.INTERRUPTED: "The run was interrupted.",
        ErrorCode.CANCELLED: "The request was cancelled.",
        ErrorCode.MAX_ITERATIONS: (
            "I could not finish this within my step limit. Please try a simpler request."
        ),
        ErrorCode.OUTPUT_INVALID: (
            "I could not produce an answer in the required format. Please try again."
        ),
        ErrorCode.USAGE_LIMIT: "This request reached its usage limit and was stopped.",
        ErrorCode.UNKNOWN: "Something went wrong. Please try again later.",
    }
)
"""The English text a user reads for each `ErrorCode`."""

_DETAILED: Final = "The run failed ({code}): {message}"


@final
class ErrorMessages:
    """Maps each `ErrorCode` to the text a user reads in `result.text` of a failed run.

    Args:
        texts: Templates by code (an `ErrorCode` or its name), over the English defaults.
            `str.format` fields: `{code}`, `{message}` (the error itself, for developers:
            it can quote a provider's reply) and `{source}`.
        resolve: Called first with the run's `ErrorInfo` and `RunContext`; its text wins,
            None falls through to `texts` and the defaults. An exception or a non-str is logged
            and falls through too: a failing run must still answer.

    Raises:
        ConfigurationError: An unknown code, a template that is not a str, or a template field
            other than `code`, `message` and `source`.

    Example:
        ```python
        from rxagent import ErrorCode, ErrorInfo, ErrorMessages

        german = ErrorMessages({ErrorCode.RATE_LIMITED: "Zu viele Anfragen, bitte warten."})
        busy = ErrorInfo(code=ErrorCode.RATE_LIMITED, message="HTTP 429")
        assert german.text(busy) == "Zu viele Anfragen, bitte warten."
        auth = ErrorInfo(code=ErrorCode.AUTH, message="HTTP 401")
        assert german.text(auth).startswith("The assistant could not sign in")
        ```
    """

    __slots__ = ("_resolve", "_texts")

    def __init__(
        self,
        texts: Mapping[ErrorCode | str, str] | None = None,
        *,
        resolve: ErrorTextResolver | None = None,
    ) -> None:
        merged = dict(DEFAULT_ERROR_MESSAGES)
        for key, template in (texts or {}).items():
            code = _code(key)
            _check_template(code, template)
            merged[code] = template
        if resolve is not None and not callable(resolve):
            raise ConfigurationError(
                f"ErrorMessages(resolve=...) takes a function (error, ctx) -> str | None, "
                f"not {type(resolve).__name__}"
            )
        self._texts: Mapping[ErrorCode, str] = MappingProxyType(merged)
        self._resolve = resolve

    @classmethod
    def detailed(cls) -> ErrorMessages:
        """The error itself for every code, `"The run failed (CODE): message"`: for development.

        Example:
            ```python
            from rxagent import ErrorCode, ErrorInfo, ErrorMessages

            error = ErrorInfo(code=ErrorCode.AUTH, message="bad key")
            assert ErrorMessages.detailed().text(error) == "The run failed (AUTH): bad key"
            ```
        """
        return cls(dict.fromkeys(ErrorCode, _DETAILED))

    @classmethod
    def of(cls, value: ErrorMessagesLike) -> ErrorMessages:
        """`value` as `ErrorMessages`: itself, a mapping of templates, a resolver, or None.

        Raises:
            ConfigurationError: Anything else, or a bad mapping (see the class).

        Example:
            ```python
            from rxagent import ErrorCode, ErrorInfo, ErrorMessages

            messages = ErrorMessages.of({"UNKNOWN": "Oops ({code})"})
            assert messages.text(ErrorInfo(code=ErrorCode.UNKNOWN, message="x")) == "Oops (UNKNOWN)"
            assert ErrorMessages.of(None).template(ErrorCode.UNKNOWN).startswith("Something")
            ```
        """
        if value is None:
            return _DEFAULT
        if isinstance(value, ErrorMessages):
            return value
        if isinstance(value, Mapping):
            return cls(value)
        if callable(value):
            return cls(resolve=value)
        raise ConfigurationError(
            "error_messages must be an ErrorMessages, a {ErrorCode: template} mapping or a "
            f"function (error, ctx) -> str | None, not {type(value).__name__}"
        )

    def template(self, code: ErrorCode) -> str:
        """The template for `code` (the mapping's, else the English default)."""
        return self._texts[code]

    def text(self, error: ErrorInfo, ctx: RunContext | None = None) -> str:
        """The text a user reads for `error` in the run `ctx`.

        The resolver is asked only with a `ctx` (the engine always gives one); without it, the
        mapping and the defaults answer.
        """
        if self._resolve is not None and ctx is not None:
            try:
                chosen: object = self._resolve(error, ctx)  # user code: may return anything
            except Exception:  # the run is failing already: answer with the default text
                logger.exception("the error_messages resolver failed for %s", error.code)
            else:
                if isinstance(chosen, str):
                    return chosen
                if chosen is not None:
                    logger.error(
                        "the error_messages resolver returned %s for %s, not a str or None",
                        type(chosen).__name__,
                        error.code,
                    )
        return self._texts[error.code].format(
            code=error.code.value, message=error.message, source=error.source
        )

    def __repr__(self) -> str:
        changed = sorted(c.value for c, t in self._texts.items() if DEFAULT_ERROR_MESSAGES[c] != t)
        return f"ErrorMessages(changed={changed}, resolve={self._resolve is not None})"


def _code(key: object) -> ErrorCode:
    try:
        return ErrorCode(str(key))
    except ValueError:
        raise ConfigurationError(
            f"ErrorMessages got the key {key!r}, which is not an ErrorCode; use one of "
            f"{', '.join(c.value for c in ErrorCode)}"
        ) from None


def _check_template(code: ErrorCode, template: object) -> None:
    if not isinstance(template, str):
        raise ConfigurationError(
            f"ErrorMessages[{code.value}] must be a str template, not {type(template).__name__}"
        )
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ConfigurationError(
            f"ErrorMessages[{code.value}] is not a valid template ({exc}); write a literal "
            "brace as {{ or }}"
        ) from None
    unknown = fields - TEMPLATE_FIELDS
    if unknown:
        raise ConfigurationError(
            f"ErrorMessages[{code.value}] uses the field(s) {sorted(unknown)}; a template may "
            f"use only {{code}}, {{message}} and {{source}} (write a literal brace as {{{{)"
        )


_DEFAULT: Final = ErrorMessages()
"""The English defaults, shared by every agent that keeps them."""
