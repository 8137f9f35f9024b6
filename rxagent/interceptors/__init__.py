"""Interceptors: wrappers around the model and tool calls of a run, and the built-ins.

An interceptor is `async def f(call, call_next)` decorated with `@around_model_call` or
`@around_tool_call`, or an object with `around_model_call` / `around_tool_call` methods. Lower
priority runs outermost, on the hooks' scale; ties keep registration order. See the
interceptors guide in the docs.
"""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.events import FallbackEvent as FallbackEvent
    from rxagent.interceptors._breaker import CircuitBreaker as CircuitBreaker
    from rxagent.interceptors._cache import CacheStore as CacheStore
    from rxagent.interceptors._cache import MemoryCacheStore as MemoryCacheStore
    from rxagent.interceptors._cache import RedisCacheStore as RedisCacheStore
    from rxagent.interceptors._cache import ResponseCache as ResponseCache
    from rxagent.interceptors._cache import SQLiteCacheStore as SQLiteCacheStore
    from rxagent.interceptors._cache import request_key as request_key
    from rxagent.interceptors._call import DEFAULT_PRIORITY as DEFAULT_PRIORITY
    from rxagent.interceptors._call import FunctionInterceptor as FunctionInterceptor
    from rxagent.interceptors._call import Interceptor as Interceptor
    from rxagent.interceptors._call import InterceptorKind as InterceptorKind
    from rxagent.interceptors._call import ModelCall as ModelCall
    from rxagent.interceptors._call import ModelInterceptorFunction as ModelInterceptorFunction
    from rxagent.interceptors._call import NextModelCall as NextModelCall
    from rxagent.interceptors._call import NextToolCall as NextToolCall
    from rxagent.interceptors._call import ToolCall as ToolCall
    from rxagent.interceptors._call import ToolInterceptorFunction as ToolInterceptorFunction
    from rxagent.interceptors._call import around_model_call as around_model_call
    from rxagent.interceptors._call import around_tool_call as around_tool_call
    from rxagent.interceptors._chain import InterceptorChain as InterceptorChain
    from rxagent.interceptors._chain import InterceptorInfo as InterceptorInfo
    from rxagent.interceptors._chain import Onion as Onion
    from rxagent.interceptors._chain import order_interceptors as order_interceptors
    from rxagent.interceptors._fallback import DEFAULT_FALLBACK_ON as DEFAULT_FALLBACK_ON
    from rxagent.interceptors._fallback import FailureKind as FailureKind
    from rxagent.interceptors._fallback import FallbackModels as FallbackModels
    from rxagent.interceptors._fallback import failure_kind as failure_kind
    from rxagent.interceptors._limits import UsageLimits as UsageLimits
    from rxagent.interceptors._prices import ModelPrice as ModelPrice
    from rxagent.interceptors._prices import Prices as Prices
    from rxagent.interceptors._prices import price_key as price_key


__all__ = [
    "DEFAULT_FALLBACK_ON",
    "DEFAULT_PRIORITY",
    "CacheStore",
    "CircuitBreaker",
    "FailureKind",
    "FallbackEvent",
    "FallbackModels",
    "FunctionInterceptor",
    "Interceptor",
    "InterceptorChain",
    "InterceptorInfo",
    "InterceptorKind",
    "MemoryCacheStore",
    "ModelCall",
    "ModelInterceptorFunction",
    "ModelPrice",
    "NextModelCall",
    "NextToolCall",
    "Onion",
    "Prices",
    "RedisCacheStore",
    "ResponseCache",
    "SQLiteCacheStore",
    "ToolCall",
    "ToolInterceptorFunction",
    "UsageLimits",
    "around_model_call",
    "around_tool_call",
    "failure_kind",
    "order_interceptors",
    "price_key",
    "request_key",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
