"""Prices: what a model's tokens cost, and `Usage.cost` from them.

The shipped table (`prices.json`, package data) holds list prices per provider and model in US
dollars per million tokens: input, output, cached input (read from the provider's prompt cache)
and cache writes. Prices change: pass your own to `ReActAgent(prices=...)`.

Cost of one response: uncached input at the input price, cached input at `cached_input` (the
input price when the table has none), cache writes at `cache_write` (likewise), output at the
output price. `Usage.input_tokens` includes cached tokens, so the uncached part is the rest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Final

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.models.base import ChatModel, Usage

__all__ = ["ModelPrice", "Prices", "price_key"]

_PER_TOKEN: Final = 1e-6  # the table's prices are per million tokens


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """One model's prices in US dollars per million tokens.

    Example:
        ```python
        from rxagent import Usage
        from rxagent.interceptors import ModelPrice

        price = ModelPrice(input=1.0, output=4.0, cached_input=0.5)
        usage = Usage(input_tokens=1_000_000, cache_read_tokens=500_000, output_tokens=250_000)
        assert price.cost(usage) == 0.5 + 0.25 + 1.0
        ```
    """

    input: float
    """Uncached input tokens."""
    output: float
    """Output tokens (reasoning included)."""
    cached_input: float | None = None
    """Input tokens read from the provider's cache (None: the input price)."""
    cache_write: float | None = None
    """Input tokens written to the provider's cache (None: the input price)."""

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int | float) or value < 0):
                raise ConfigurationError(
                    f"ModelPrice.{name} must be a number >= 0 (US dollars per million "
                    f"tokens), got {value!r}"
                )

    def cost(self, usage: Usage) -> float:
        """The cost of `usage` in US dollars."""
        cached = usage.cache_read_tokens
        written = usage.cache_write_tokens
        plain = max(usage.input_tokens - cached - written, 0)
        read_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        total = (
            plain * self.input
            + cached * read_price
            + written * write_price
            + usage.output_tokens * self.output
        )
        return total * _PER_TOKEN


def price_key(model: ChatModel) -> str:
    """The table key of `model`: `"provider:name"` (just the name without a provider)."""
    provider = getattr(model, "provider", "")
    return f"{provider}:{model.name}" if provider else model.name


class Prices:
    """A price table: `"provider:model"` to `ModelPrice`. Look-ups are one dict read.

    Args:
        prices: The table; `ModelPrice`s or dicts of their fields.

    Raises:
        ConfigurationError: A price that is not a `ModelPrice` or its fields.

    Example:
        ```python
        from rxagent import Usage
        from rxagent.interceptors import ModelPrice, Prices

        shipped = Prices.default()
        assert shipped.get("openai:gpt-4o-mini") is not None
        mine = shipped.with_prices({"openai:my-finetune": ModelPrice(input=1.0, output=2.0)})
        assert mine.get("openai:my-finetune").output == 2.0
        assert Prices({}).get("openai:gpt-4o-mini") is None
        ```
    """

    __slots__ = ("_table",)

    def __init__(self, prices: Mapping[str, ModelPrice | Mapping[str, float]]) -> None:
        table: dict[str, ModelPrice] = {}
        for key, price in prices.items():
            if isinstance(price, ModelPrice):
                table[key] = price
                continue
            try:
                table[key] = ModelPrice(**price)
            except TypeError as exc:
                raise ConfigurationError(
                    f"Prices: the price of {key!r} must be a ModelPrice or a dict of input, "
                    f"output, cached_input, cache_write; {exc}"
                ) from None
        self._table = table

    @staticmethod
    def default() -> Prices:
        """The table shipped with rxagent (`rxagent/interceptors/prices.json`)."""
        return _shipped()

    def get(self, key: str) -> ModelPrice | None:
        """The price of `"provider:model"`, or None."""
        return self._table.get(key)

    def with_prices(self, prices: Mapping[str, ModelPrice | Mapping[str, float]]) -> Prices:
        """This table with `prices` added or replaced."""
        return Prices({**self._table, **Prices(prices)._table})

    def cost(self, model: ChatModel, usage: Usage) -> float:
        """What `usage` of `model` cost (0 when the table has no price for it)."""
        price = self._table.get(price_key(model))
        return 0.0 if price is None else price.cost(usage)

    def __len__(self) -> int:
        return len(self._table)


@cache
def _shipped() -> Prices:
    text = resources.files("rxagent.interceptors").joinpath("prices.json").read_text("utf-8")
    return Prices(json.loads(text)["prices"])
