"""A BERT encoder in numpy, for all-MiniLM-L6-v2 and other small sentence-transformers models.

This is the sentence-transformers pipeline of all-MiniLM-L6-v2 (`modules.json`: Transformer,
then mean Pooling, then Normalize), written out so it runs without torch: word, position and
token-type embeddings with LayerNorm; six post-norm encoder layers (12-head self-attention with
the padding mask, then a GELU feed-forward); the mean of the token vectors under the mask; and,
in `LocalEmbedder`, L2 normalisation. Everything is float32. The weights are read once from
`model.safetensors`; every function here is pure and holds no lock, so threads may share one
`BertWeights`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import NDArray

__all__ = ["BertConfig", "BertLayer", "BertWeights", "encode", "erf", "gelu", "load_weights"]

# Abramowitz and Stegun 7.1.26: |error| <= 1.5e-7 over the whole real line, which is below the
# float32 resolution of the activations it feeds (numpy has no erf, and scipy is not a dependency).
_ERF_P: Final = np.float32(0.3275911)
_ERF_A: Final = tuple(
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_SQRT_HALF: Final = np.float32(1.0 / math.sqrt(2.0))
_GELU_ROWS: Final = 64
_MASKED: Final = np.finfo(np.float32).min
"""What a padded key adds to an attention score (as transformers does): its weight becomes 0."""


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The shape of a BERT encoder, from its `config.json`."""

    hidden_size: int
    num_layers: int
    num_heads: int
    layer_norm_eps: float
    max_positions: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BertConfig:
        """Read the fields a BERT `config.json` has; a missing field raises `KeyError`."""
        if data.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"hidden_act {data['hidden_act']!r} is not supported, only 'gelu'")
        return cls(
            hidden_size=int(data["hidden_size"]),
            num_layers=int(data["num_hidden_layers"]),
            num_heads=int(data["num_attention_heads"]),
            layer_norm_eps=float(data["layer_norm_eps"]),
            max_positions=int(data["max_position_embeddings"]),
        )


@dataclass(frozen=True, slots=True)
class BertLayer:
    """One encoder layer; each weight matrix is stored transposed, `(in, out)`, for `x @ w`."""

    qkv: NDArray[np.float32]
    """The query, key and value projections side by side: `(hidden, 3 * hidden)`."""
    qkv_bias: NDArray[np.float32]
    attn_out: NDArray[np.float32]
    attn_out_bias: NDArray[np.float32]
    attn_norm: tuple[NDArray[np.float32], NDArray[np.float32]]
    ffn_in: NDArray[np.float32]
    ffn_in_bias: NDArray[np.float32]
    ffn_out: NDArray[np.float32]
    ffn_out_bias: NDArray[np.float32]
    ffn_norm: tuple[NDArray[np.float32], NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class BertWeights:
    """A whole encoder: its config, embedding tables and layers (read-only after loading)."""

    config: BertConfig
    word: NDArray[np.float32]
    position: NDArray[np.float32]
    token_type: NDArray[np.float32]
    embed_norm: tuple[NDArray[np.float32], NDArray[np.float32]]
    layers: tuple[BertLayer, ...]


def load_weights(folder: Path) -> BertWeights:
    """Read `config.json` and `model.safetensors` of a BERT model from `folder`.

    Raises:
        FileNotFoundError: A file is missing.
        KeyError: A tensor or config field is missing.
    """
    from safetensors.numpy import load_file

    config = BertConfig.from_json(json.loads((folder / "config.json").read_text("utf-8")))
    tensors = load_file(folder / "model.safetensors")
    # checkpoints saved from BertModel have no prefix; those saved from a task head have "bert."
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def get(name: str) -> NDArray[np.float32]:
        return np.ascontiguousarray(tensors[prefix + name], dtype=np.float32)

    def linear(name: str) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

    def norm(name: str) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        return get(f"{name}.weight"), get(f"{name}.bias")

    layers = []
    for i in range(config.num_layers):
        at = f"encoder.layer.{i}"
        q, qb = linear(f"{at}.attention.self.query")
        k, kb = linear(f"{at}.attention.self.key")
        v, vb = linear(f"{at}.attention.self.value")
        attn_out, attn_out_bias = linear(f"{at}.attention.output.dense")
        ffn_in, ffn_in_bias = linear(f"{at}.intermediate.dense")
        ffn_out, ffn_out_bias = linear(f"{at}.output.dense")
        layers.append(
            BertLayer(
                qkv=np.ascontiguousarray(np.concatenate([q, k, v], axis=1)),
                qkv_bias=np.concatenate([qb, kb, vb]),
                attn_out=attn_out,
                attn_out_bias=attn_out_bias,
                attn_norm=norm(f"{at}.attention.output.LayerNorm"),
                ffn_in=ffn_in,
                ffn_in_bias=ffn_in_bias,
                ffn_out=ffn_out,
                ffn_out_bias=ffn_out_bias,
                ffn_norm=norm(f"{at}.output.LayerNorm"),
            )
        )
    return BertWeights(
        config=config,
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type=get("embeddings.token_type_embeddings.weight"),
        embed_norm=norm("embeddings.LayerNorm"),
        layers=tuple(layers),
    )


def erf(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """The error function, elementwise, within 1.5e-7 of `math.erf` (float32 in, float32 out)."""
    # in place on two buffers: this runs over every feed-forward activation, and temporaries
    # per operation would cost more than the arithmetic
    a = np.abs(x)
    t = a * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * _ERF_A[0]
    for coefficient in _ERF_A[1:]:
        poly += coefficient
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(np.float32(1.0), poly, out=poly)
    result: NDArray[np.float32] = np.copysign(poly, x, out=poly)
    return result


def gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """BERT's GELU, the exact erf form: `x * (1 + erf(x / sqrt(2))) / 2` (not the tanh one)."""
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty_like(rows)
    # a few rows at a time, so the temporaries of erf's dozen passes stay in the CPU's cache:
    # twice as fast as whole arrays of a batch's feed-forward activations
    for start in range(0, rows.shape[0], _GELU_ROWS):
        block = rows[start : start + _GELU_ROWS]
        part = erf(block * _SQRT_HALF)
        part += np.float32(1.0)
        part *= block
        part *= np.float32(0.5)
        out[start : start + _GELU_ROWS] = part
    return out.reshape(x.shape)


def _layer_norm(
    x: NDArray[np.float32], norm: tuple[NDArray[np.float32], NDArray[np.float32]], eps: float
) -> NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    scale, shift = norm
    out: NDArray[np.float32] = centered / np.sqrt(var + np.float32(eps)) * scale + shift
    return out


def _softmax(scores: NDArray[np.float32]) -> NDArray[np.float32]:
    scores = scores - scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def _attention(
    x: NDArray[np.float32], layer: BertLayer, bias: NDArray[np.float32], heads: int
) -> NDArray[np.float32]:
    batch, tokens, hidden = x.shape
    size = hidden // heads
    # 2-D products throughout: numpy hands a (batch, tokens, d) @ (d, e) product to BLAS one
    # text at a time, many times slower than one (batch * tokens, d) @ (d, e) call
    qkv = x.reshape(-1, hidden) @ layer.qkv + layer.qkv_bias
    # (3, batch, heads, tokens, size), copied once so the batched products read contiguous rows
    q, k, v = np.ascontiguousarray(
        qkv.reshape(batch, tokens, 3, heads, size).transpose(2, 0, 3, 1, 4)
    )
    q *= np.float32(1.0 / math.sqrt(size))
    scores = q @ k.transpose(0, 1, 3, 2)
    scores += bias
    context = _softmax(scores) @ v  # (batch, heads, tokens, size)
    merged = context.transpose(0, 2, 1, 3).reshape(batch * tokens, hidden)
    out: NDArray[np.float32] = merged @ layer.attn_out + layer.attn_out_bias
    return out.reshape(batch, tokens, hidden)


def encode(
    weights: BertWeights, ids: NDArray[np.int64], mask: NDArray[np.int64]
) -> NDArray[np.float32]:
    """Mean-pooled token vectors of a padded batch: `(batch, tokens)` ids → `(batch, hidden)`.

    `mask` is 1 for a real token and 0 for padding. Padding changes nothing: it is masked out of
    attention and out of the mean, so a text gets the same vector in any batch.
    """
    config = weights.config
    eps = config.layer_norm_eps
    tokens = ids.shape[1]
    batch = ids.shape[0]
    x = weights.word[ids] + weights.position[:tokens] + weights.token_type[0]
    x = _layer_norm(x, weights.embed_norm, eps)
    keep = mask.astype(np.float32)
    # (batch, 1, 1, tokens): broadcast over heads and queries
    bias = ((np.float32(1.0) - keep) * _MASKED)[:, None, None, :]
    for layer in weights.layers:
        x = _layer_norm(x + _attention(x, layer, bias, config.num_heads), layer.attn_norm, eps)
        flat = x.reshape(batch * tokens, -1)
        inner = gelu(flat @ layer.ffn_in + layer.ffn_in_bias)
        out = (inner @ layer.ffn_out + layer.ffn_out_bias).reshape(x.shape)
        x = _layer_norm(x + out, layer.ffn_norm, eps)
    summed = np.einsum("btd,bt->bd", x, keep)
    counts = np.maximum(keep.sum(axis=1, keepdims=True), np.float32(1e-9))
    pooled: NDArray[np.float32] = (summed / counts).astype(np.float32, copy=False)
    return pooled
