"""Parity of the BM25 scores with references, as bm25s tests itself: rank_bm25's BM25Okapi and
Lucene's formula written out by hand, on a fixture corpus with our own tokenizer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medground.index.bm25 import BM25Index
from medground.index.text import BM25Settings
from medground.schema import Chunk, make_chunk_id

TEXTS = ["Digoxin toxicity is more likely with hypokalemia and renal impairment.",
         "Warfarin is monitored with the INR; vitamin K reverses warfarin.",
         "Furosemide causes hypokalemia; monitor potassium in clients taking digoxin and digoxin levels.",
         "Insulin lowers blood glucose; hypoglycemia is its main adverse effect.",
         "Heparin is reversed by protamine; heparin monitoring uses the aPTT.",
         "Isoniazid neuropathy is prevented by pyridoxine.",
         "Spironolactone can cause hyperkalemia, especially with ACE inhibitors and potassium supplements.",
         "Metformin is held before iodinated contrast because of lactic acidosis risk."]
QUERIES = ["digoxin hypokalemia potassium", "warfarin reversal vitamin K", "heparin protamine", "hyperkalemia ACE"]
K1, B = 1.5, 0.75


def _index(method: str) -> BM25Index:
    chunks = [Chunk(chunk_id=make_chunk_id("f.txt", (), t, i), doc_id=f"d{i}", corpus="fx", source_path="f.txt",
                    text=t, title="", book="", chapter="", section_path=(), token_count=len(t.split()),
                    char_start=0, char_end=len(t)) for i, t in enumerate(TEXTS)]
    return BM25Index.build(chunks, BM25Settings(method=method, k1=K1, b=B))


@pytest.mark.parametrize("query", QUERIES)
def test_robertson_matches_rank_bm25_okapi(query):
    from rank_bm25 import BM25Okapi

    index = _index("robertson")
    corpus = [index.tokenizer.tokenize(f"  {t}") for t in TEXTS]  # as indexed: title, path, text
    q = index.tokenizer.tokenize(query)
    # no query term is in half the documents, so BM25Okapi's epsilon floor for negative idf never
    # applies; Okapi keeps the (k1 + 1) factor that Robertson's ranking drops
    assert all(sum(t in d for d in corpus) < len(corpus) / 2 for t in q)
    ours = np.asarray(index.model.get_scores(q))
    ref = BM25Okapi(corpus, k1=K1, b=B).get_scores(q)
    np.testing.assert_allclose(ours * (K1 + 1), ref, rtol=1e-5)


@pytest.mark.parametrize("query", QUERIES)
def test_lucene_matches_the_formula_written_out(query):
    index = _index("lucene")
    corpus = [index.tokenizer.tokenize(f"  {t}") for t in TEXTS]
    q = index.tokenizer.tokenize(query)
    n_docs, avgdl = len(corpus), sum(map(len, corpus)) / len(corpus)

    def score(doc: list[str]) -> float:
        total = 0.0
        for term in q:
            df, tf = sum(term in d for d in corpus), doc.count(term)
            idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + K1 * (1 - B + B * len(doc) / avgdl))
        return total

    np.testing.assert_allclose(index.model.get_scores(q), [score(d) for d in corpus], rtol=1e-5)


def test_doc_freq_counts_documents_not_occurrences():
    index = _index("lucene")
    assert index.doc_freq("digoxin") == 2  # twice in one document, once in another
    assert index.doc_freq("Digoxin hypokalemia") == 2  # the rarer of its words
    assert index.doc_freq("nosuchterm") == 0
    assert index.doc_freq("the") is None  # a stop word has no term to count
