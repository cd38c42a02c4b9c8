"""Index builds go through the registry: `index build` names a kind, the kind's module builds it,
and a new kind needs no change to the command."""

from __future__ import annotations

import pytest

from medground import registry
from medground.index.build import BuiltIndex, IndexBuildOptions, build_index, index_kinds
from medground.index.fingerprint import IndexFingerprint
from medground.schema import Chunk, Document
from medground.store.chunks import ChunkStore, ManifestEntry

TEXTS = {"c1": ("Scurvy", "Scurvy comes from a lack of vitamin C (ascorbic acid)."),
         "c2": ("Asthma", "Albuterol relaxes the airways and eases wheezing."),
         "c3": ("Stroke", "Sudden weakness of one arm or one side of the face.")}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path / "home"))
    with ChunkStore(tmp_path / "store.sqlite") as s:
        chunks = [Chunk(chunk_id=k, doc_id=f"doc-{k}", corpus="test", source_path=f"{k}.xml", text=t,
                        title=title, section_path=(title,)) for k, (title, t) in TEXTS.items()]
        docs = [Document(doc_id=f"doc-{k}", corpus="test", source_path=f"{k}.xml", title=title, blocks=[])
                for k, (title, _) in TEXTS.items()]
        s.replace_unit(ManifestEntry(unit="/u1", reader="jsonl", corpus="test", sha256="s", file_count=1,
                                     chunker="{}"), docs, chunks)
        yield s


def test_the_built_in_kinds_are_registered_builders():
    assert {"bm25", "dense", "splade", "sections"} <= set(index_kinds())


@pytest.mark.parametrize("kind", ["bm25", "sections"])
def test_a_kind_is_built_saved_and_described(store, kind):
    row = build_index(kind, store, None, IndexBuildOptions(show_progress=False))
    assert row["retriever"] == kind and row["chunks"] == 3 and row["bytes"] > 0
    assert IndexFingerprint.read(row["directory"]).chunks == store.fingerprint(None)


def test_a_new_kind_needs_only_its_registration(store, tmp_path):
    saved = []

    class Toy:
        def save(self, directory):
            saved.append(directory)

    @registry.register("index", "toy-for-test")
    def build_toy(chunks, corpora, options, *, progress=None, **_):
        progress(chunks.count(corpora))
        return BuiltIndex(Toy(), tmp_path / "toy", {"note": "built"})

    told = []
    row = build_index("toy-for-test", store, None, progress=told.append)
    assert saved == [tmp_path / "toy"] and told == [3] and row["note"] == "built"
    with pytest.raises(registry.UnknownComponentError, match="toy-for-test"):
        build_index("no-such-kind", store, None)
