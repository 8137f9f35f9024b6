"""The optional OpenTelemetry API: a typed error, naming the extra, when it is missing."""

from __future__ import annotations

import importlib
from typing import Final

from rxagent.errors import ConfigurationError

__all__ = ["INSTALL_HINT", "otel_missing", "require_otel"]

INSTALL_HINT: Final = 'pip install "rxagent[otel]"'
"""What to run when the OpenTelemetry API is missing."""


def otel_missing(feature: str) -> ConfigurationError:
    """The error for `feature` used without the OpenTelemetry API."""
    return ConfigurationError(
        f"{feature} needs the OpenTelemetry API, which is not installed: {INSTALL_HINT} "
        "(and an SDK with an exporter, such as opentelemetry-sdk, to send the spans somewhere)"
    )


def require_otel(feature: str) -> None:
    """Import the OpenTelemetry API once, or say how to install it.

    Raises:
        ConfigurationError: It is not installed; the message names `pip install "rxagent[otel]"`.
    """
    try:
        importlib.import_module("opentelemetry.trace")
        importlib.import_module("opentelemetry.propagate")
    except ImportError as exc:
        raise otel_missing(feature) from exc
