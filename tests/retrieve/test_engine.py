from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from medground import registry
from medground.retrieve.engine import RetrievalEngine, RetrieveSettings
from medground.retrieve.rerank import BiEncoderReranker, RerankSettings
from medground.schema import Query

from ._fakes import BagOfWordsEmbedder, KeywordRetriever, chunk

CHUNKS = [
    chunk("c1", "insulin lowers blood glucose", doc="d1", section=("Pancreas",)),
    chunk("c2", "glucagon raises blood glucose", doc="d1", section=("Pancreas",)),
    chunk("c3", "metformin treats type 2 diabetes", doc="d2", section=("Drugs",)),
    chunk("c4", "aspirin inhibits platelets", doc="d2", section=("Drugs",)),
    chunk("c5", "the femur is a long bone", doc="d3", section=("Bones",)),
]


def words(text: str) -> int:
    return len(text.split())


def test_settings_accept_names_and_the_design_yaml_shape():
    s = RetrieveSettings.model_validate(
        {"retrievers": ["bm25", "dense"], "fusion": "norm", "top": 32,
         "rerank": {"name": "cross-encoder", "path": "/models/bge-reranker-base"}})
    assert [(r.name, r.weight) for r in s.retrievers] == [("bm25", 1.0), ("dense", 1.0)]
    assert s.rerank == RerankSettings(name="cross-encoder", model="/models/bge-reranker-base")
    assert RetrieveSettings(rerank="maxsim").rerank.name == "maxsim"
    d = RetrieveSettings()
    assert (d.top, d.final_k, d.budget_tokens, d.fusion, d.rrf_k) == (150, 6, 1200, "rrf", 60.0)


@pytest.mark.parametrize("bad, where", [
    ({"retrievers": ["bm25", "dense"], "fusion": None}, "fusion"),
    ({"retriever": ["bm25"]}, "retriever"),
    ({"retrievers": [{"name": "bm25", "wieght": 2}]}, "wieght"),
    ({"retrievers": []}, "retrievers"),
    ({"final_k": 0}, "final_k"),
])
def test_settings_errors_name_the_field(bad, where):
    with pytest.raises(ValidationError, match=where):
        RetrieveSettings.model_validate(bad)


def engine(**settings) -> RetrievalEngine:
    a = KeywordRetriever(CHUNKS, name="a")
    b = KeywordRetriever(list(reversed(CHUNKS)), name="b")
    s = RetrieveSettings(retrievers=["a", "b"], **settings)
    return RetrievalEngine(s, retrievers={"a": a, "b": b}, count_tokens=words)


def test_fused_retrieve_by_hand_and_timings():
    eng = engine(fusion="rrf", rrf_k=1, final_k=2)
    # "blood glucose": a → c1, c2 ; b (reversed corpus) → c2, c1
    # c1 = 1/2 + 1/3 = c2 ; tie → best rank 1: c1 in list 0 → c1 first
    out = eng.retrieve("blood glucose")
    assert [(p.chunk.chunk_id, round(p.score, 6)) for p in out] == [("c1", round(5 / 6, 6)), ("c2", round(5 / 6, 6))]
    assert set(eng.timings) == {"first_stage", "fusion"}
    assert eng.first_stage.name == "rrf(a+b)"


def test_multi_query_and_weights():
    eng = RetrievalEngine(
        {"retrievers": [{"name": "a", "weight": 1.0}, {"name": "b", "weight": 0.0}], "fusion": "rrf", "rrf_k": 1},
        retrievers={"a": KeywordRetriever(CHUNKS), "b": KeywordRetriever(list(reversed(CHUNKS)))},
        count_tokens=words)
    out = eng.retrieve([Query("aspirin"), Query("metformin diabetes", "keywords")], k=10)
    # b has weight 0: a alone → aspirin: c4 (1/2) ; keywords: c3 (1/2) ; tie → c4 (list 0)
    assert [p.chunk.chunk_id for p in out] == ["c4", "c3"]
    assert out[1].metadata["queries"] == ["metformin diabetes"]


def test_rerank_against_the_original_query_and_evidence():
    rr = BiEncoderReranker(BagOfWordsEmbedder(), candidates=10)
    s = RetrieveSettings(retrievers=["a"], fusion="rrf", final_k=2, budget_tokens=100)
    eng = RetrievalEngine(s, retrievers={"a": KeywordRetriever(CHUNKS)}, reranker=rr, count_tokens=words)
    qs = [Query("glucagon", "rewrite"), Query("blood glucose raises"), Query("femur", "expansion")]
    ev = eng.evidence(qs)
    # original query (the one of kind "original") is "blood glucose raises": c2 shares all three words
    assert [c.chunk_id for c in ev.citations] == ["c2", "c1"]
    assert ev.citations[0].number == 1 and ev.citations[0].label == "Book / Ch 1 / Pancreas"
    assert ev.token_count == (7 + 4) + (7 + 4)
    assert [q.text for q in ev.queries] == ["glucagon", "blood glucose raises", "femur"]
    assert set(eng.timings) == {"first_stage", "fusion", "rerank", "pack"}


def test_single_retriever_without_fusion_and_empty_query():
    eng = RetrievalEngine({"retrievers": ["a"], "fusion": None}, retrievers={"a": KeywordRetriever(CHUNKS)},
                          count_tokens=words)
    assert [p.chunk.chunk_id for p in eng.retrieve("femur")] == ["c5"]
    with pytest.raises(ValueError, match="need a fusion method"):
        eng.retrieve(["femur", "bone"])
    with pytest.raises(ValueError, match="empty"):
        eng.retrieve("   ")


class FakeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reverse: bool = False


_built: list[dict] = []


@registry.register("retriever", "test-engine-fake")
def _make_fake(settings: FakeSettings | None = None, **kwargs) -> KeywordRetriever:
    _built.append({"settings": settings, **kwargs})
    s = settings or FakeSettings()
    return KeywordRetriever(list(reversed(CHUNKS)) if s.reverse else CHUNKS)


def test_builds_registered_retrievers_with_typed_settings(monkeypatch):
    monkeypatch.setattr(registry, "_loaded", True)
    _built.clear()
    eng = RetrievalEngine({"retrievers": [{"name": "test-engine-fake", "settings": {"reverse": True}}],
                           "fusion": None, "corpora": ["openstax"]}, chunks="CHUNKSRC", count_tokens=words)
    assert [p.chunk.chunk_id for p in eng.retrieve("blood")] == ["c2", "c1"]  # reversed corpus order
    assert _built == [{"settings": FakeSettings(reverse=True), "corpora": ["openstax"],
                       "build_if_missing": False, "chunks": "CHUNKSRC"}]
    bad = RetrievalEngine({"retrievers": [{"name": "test-engine-fake", "settings": {"revers": 1}}],
                           "fusion": None}, count_tokens=words)
    with pytest.raises(ValidationError, match="revers"):
        bad.retrieve("blood")


def test_sections_restrict_to_the_best_sections():
    pytest.importorskip("bm25s")
    from medground.index.sections import SectionIndex

    eng = RetrievalEngine({"retrievers": ["a"], "fusion": None, "sections": 1},
                          retrievers={"a": KeywordRetriever(CHUNKS)},
                          section_index=SectionIndex.build(CHUNKS), count_tokens=words)
    # unrestricted, "glucose" would also bring c1 and c2; the best section for the query is
    # Drugs (two matching words), so only its chunks may come back.
    out = eng.retrieve("metformin diabetes glucose", k=5)
    assert [p.chunk.chunk_id for p in out] == ["c3"]


class OwnSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    temperature: float = 0.0


@registry.register("reranker", "test-own-settings")
def _make_own(settings: OwnSettings | None = None):
    return ("own", settings)


def test_make_reranker_routes_options_to_the_factory_settings_model(monkeypatch):
    from medground.retrieve.engine import make_reranker

    monkeypatch.setattr(registry, "_loaded", True)
    assert make_reranker(RerankSettings(name="test-own-settings", options={"temperature": 0.5})) == (
        "own", OwnSettings(temperature=0.5))
    with pytest.raises(ValidationError, match="temprature"):
        make_reranker(RerankSettings(name="test-own-settings", options={"temprature": 1}))
    with pytest.raises(ValueError, match="takes no options"):
        make_reranker(RerankSettings(name="cross-encoder", model="x", options={"a": 1}))


def test_real_bm25_over_pubmedqa_abstracts(shared_data):
    """Integration: the index engineer's BM25 over 50 real abstracts, through the engine."""
    import json

    pytest.importorskip("bm25s")
    from medground.index.bm25 import BM25Index, BM25Retriever
    from medground.index.fingerprint import ChunkList
    from medground.schema import Chunk

    items = list(json.loads((shared_data / "benchmarks/pubmedqa/ori_pqal.json").read_text()).items())[:50]
    chunks = [Chunk(chunk_id=f"{pmid}-{i}", doc_id=pmid, corpus="pubmedqa", source_path="ori_pqal.json",
                    text=t, title="", section_path=(lab,), char_start=0, char_end=len(t))
              for pmid, it in items for i, (t, lab) in enumerate(zip(it["CONTEXTS"], it["LABELS"]))]
    bm25 = BM25Retriever(BM25Index.build(chunks), ChunkList(chunks))
    eng = RetrievalEngine({"retrievers": ["bm25"], "fusion": None, "final_k": 3, "budget_tokens": 600},
                          retrievers={"bm25": bm25})
    hits = sum(eng.retrieve(it["QUESTION"])[0].chunk.doc_id == pmid for pmid, it in items)
    assert hits >= 45  # known-item search: the question's own abstract comes first (~95 %)
    ev = eng.evidence(items[0][1]["QUESTION"])
    assert ev.citations[0].chunk_id.startswith(items[0][0]) and 0 < ev.token_count <= 600
    assert len(ev.citations) <= 3


def test_a_deferred_missing_index_is_left_out_and_named_not_built(tmp_path, monkeypatch):
    from medground.index.fingerprint import ChunkList, IndexNotFoundError

    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    chunks = ChunkList(CHUNKS)
    engine = RetrievalEngine({"retrievers": ["bm25", "dense"], "fusion": "rrf", "top": 5, "final_k": 2},
                             chunks=chunks, build_if_missing=True, defer_builds=("dense",))
    ev = engine.evidence("blood glucose")
    assert ev.citations and {c.chunk_id for c in ev.citations} <= {"c1", "c2"}
    assert list(engine.left_out) == ["dense"]
    assert "medground index build --retrievers dense" in engine.left_out["dense"]
    assert not (tmp_path / "indexes" / "dense").exists()  # nothing was built
    # never degraded to nothing: a deferred retriever that is the only one fails as before
    alone = RetrievalEngine({"retrievers": ["dense"], "fusion": None}, chunks=chunks, build_if_missing=True,
                            defer_builds=("dense",))
    with pytest.raises(IndexNotFoundError):
        alone.evidence("blood glucose")


def test_preferred_passages_are_packed_first_or_alone():
    eng = RetrievalEngine({"retrievers": ["a"], "fusion": None, "final_k": 3, "budget_tokens": 500},
                          retrievers={"a": KeywordRetriever(CHUNKS)}, count_tokens=words)
    plain = [c.chunk_id for c in eng.evidence("blood glucose metformin").citations]
    names_metformin = lambda ps: ["metformin" in p.chunk.text for p in ps]  # noqa: E731
    first = [c.chunk_id for c in eng.evidence("blood glucose metformin", prefer=names_metformin).citations]
    only = [c.chunk_id for c in eng.evidence("blood glucose metformin", prefer=names_metformin,
                                             preferred_only=True).citations]
    assert plain[0] != "c3" and "c3" in plain  # the premise: ranked below the glucose chunks
    assert first[0] == "c3" and sorted(first) == sorted(plain)  # first, the rest in their order
    assert only == ["c3"]
    # nothing preferred: the ranking stands
    none = [c.chunk_id for c in eng.evidence("blood glucose metformin", prefer=lambda ps: [False] * len(ps),
                                             preferred_only=True).citations]
    assert none == plain
