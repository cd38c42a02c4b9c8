import pytest

from medground.index.bm25 import BM25Index, BM25Retriever
from medground.index.fingerprint import ChunkList, StaleIndexError
from medground.index.sections import (
    SectionFilteredRetriever,
    SectionIndex,
    SectionSettings,
    group_sections,
    make_sections,
)
from medground.index.text import BM25Settings
from medground.schema import Chunk

# Two pages; "blood" occurs in both heart and kidney sections.
ROWS = [
    ("a1", "heart", ("Heart", "Conduction"), "The sinoatrial node starts each heartbeat."),
    ("a2", "heart", ("Heart", "Conduction"), "Impulses pass through the atrioventricular node to the ventricles."),
    ("a3", "heart", ("Heart", "Blood flow"), "Blood leaves the left ventricle through the aorta."),
    ("b1", "kidney", ("Kidney", "Filtration"), "The glomerulus filters blood plasma into Bowman capsule."),
    ("b2", "kidney", ("Kidney", "Filtration"), "Filtration rate depends on blood pressure in the glomerulus."),
    ("b3", "kidney", ("Kidney", "Hormones"), "The kidney releases renin and erythropoietin."),
]


@pytest.fixture
def source():
    return ChunkList(Chunk(chunk_id=cid, doc_id=doc, corpus="t", source_path=f"{doc}.xml", text=text,
                           title=path[0], section_path=path) for cid, doc, path, text in ROWS)


@pytest.fixture
def section_index(source):
    return SectionIndex.build(source.iter_chunks(), chunks_fingerprint=source.fingerprint())


def test_grouping(source):
    sections, pseudo = group_sections(source.iter_chunks())
    assert [s.chunk_ids for s in sections] == [["a1", "a2"], ["a3"], ["b1", "b2"], ["b3"]]
    assert pseudo[0].text.startswith("The sinoatrial node") and "atrioventricular" in pseudo[0].text
    assert pseudo[0].section_path == ("Heart", "Conduction")


def test_top_section(section_index):
    (best, score), *_ = section_index.top_sections("glomerulus filtration", 2)
    assert best.section_path == ("Kidney", "Filtration") and score > 0


def test_filtered_retrieval_stays_in_top_sections(source, section_index):
    inner = BM25Retriever(BM25Index.build(source.iter_chunks()), source)
    unfiltered = [p.chunk.chunk_id for p in inner.search("blood glomerulus", 6)]
    assert "a3" in unfiltered
    r = SectionFilteredRetriever(inner, section_index, top_sections=1)
    hits = [p.chunk.chunk_id for p in r.search("blood glomerulus", 6)]
    assert hits and set(hits) <= {"b1", "b2"}


class _NoFilter:
    """A retriever without search_within: the section filter over-fetches and filters."""

    name = "plain"

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def search(self, query, k=10):
        self.calls.append(k)
        return self.inner.search(query, k)

    def batch_search(self, queries, k=10):
        return [self.search(q, k) for q in queries]


def test_post_filter_fallback(source, section_index):
    plain = _NoFilter(BM25Retriever(BM25Index.build(source.iter_chunks()), source))
    r = SectionFilteredRetriever(plain, section_index, top_sections=1, oversample=5)
    hits = r.search("blood glomerulus", 2)
    assert plain.calls == [10]
    assert [p.chunk.chunk_id for p in hits] and {p.chunk.chunk_id for p in hits} <= {"b1", "b2"}
    assert [p.rank for p in hits] == list(range(1, len(hits) + 1))


def test_no_section_match_searches_everything(source, section_index):
    inner = BM25Retriever(BM25Index.build(source.iter_chunks()), source)
    r = SectionFilteredRetriever(inner, section_index, top_sections=1)
    assert r.search("zzzz qqqq", 3) == inner.search("zzzz qqqq", 3)


def test_save_load(tmp_path, source, section_index):
    section_index.save(tmp_path / "sec")
    loaded = SectionIndex.load(tmp_path / "sec", chunks_fingerprint=source.fingerprint())
    assert [s.chunk_ids for s in loaded.sections] == [s.chunk_ids for s in section_index.sections]
    q = "renin hormones"
    assert [(s.section_id, sc) for s, sc in loaded.top_sections(q, 3)] == \
           [(s.section_id, sc) for s, sc in section_index.top_sections(q, 3)]
    with pytest.raises(StaleIndexError):
        SectionIndex.load(tmp_path / "sec", SectionSettings(bm25=BM25Settings(stemmer=None)))


def test_factory_with_bm25_inner(source):
    r = make_sections(SectionSettings(top_sections=1), chunks=source, build_if_missing=True)
    assert [p.chunk.chunk_id for p in r.search("erythropoietin", 3)] == ["b3"]
    assert r.batch_search(["sinoatrial node"], 1)[0][0].chunk.chunk_id == "a1"
