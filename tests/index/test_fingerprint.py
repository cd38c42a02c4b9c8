import pytest

from medground.index.fingerprint import (
    ChunkList,
    IndexFingerprint,
    IndexNotFoundError,
    StaleIndexError,
    index_dir,
    resolve_chunks,
    to_passages,
)
from medground.schema import Chunk


def chunk(cid, text):
    return Chunk(chunk_id=cid, doc_id="d", corpus="c", source_path="p", text=text, title="t")


def fp(**over):
    base = {"kind": "bm25", "settings": {"k1": 1.5, "b": 0.75}, "chunks": "abc", "chunk_count": 10}
    base.update(over)
    return IndexFingerprint(**base)


def test_roundtrip(tmp_path):
    fp().write(tmp_path)
    back = IndexFingerprint.read(tmp_path)
    assert back.settings == {"k1": 1.5, "b": 0.75} and back.chunks == "abc" and back.chunk_count == 10
    assert "python" in back.versions and "bm25s" in back.versions
    back.check(fp())  # identical: no error


def test_missing_index(tmp_path):
    with pytest.raises(IndexNotFoundError):
        IndexFingerprint.read(tmp_path / "nope")


@pytest.mark.parametrize("over,field", [
    ({"settings": {"k1": 1.2, "b": 0.75}}, "settings.k1"),
    ({"settings": {"k1": 1.5, "b": 0.75, "stemmer": "english"}}, "settings.stemmer"),
    ({"chunks": "xyz"}, "chunks"),
    ({"chunk_count": 11}, "chunk_count"),
    ({"embedder": "onnx-minilm:x"}, "embedder"),
    ({"kind": "dense"}, "kind"),
])
def test_mismatch_names_the_field(over, field):
    with pytest.raises(StaleIndexError) as err:
        fp().check(fp(**over), "/idx")
    msg = str(err.value)
    assert f"{field} is" in msg and "/idx" in msg and "medground index build --retrievers" in msg


def test_unset_expectations_are_not_checked():
    fp().check(fp(chunks=None, chunk_count=None))


def test_chunklist_fingerprint_follows_content():
    a = ChunkList([chunk("1", "x"), chunk("2", "y")])
    b = ChunkList([chunk("1", "x"), chunk("2", "y changed")])
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == ChunkList([chunk("1", "x"), chunk("2", "y")]).fingerprint()
    assert a.count(["c"]) == 2 and a.count(["other"]) == 0


def test_resolve_keeps_order_and_refuses_missing():
    src = ChunkList([chunk("1", "x"), chunk("2", "y")])
    assert [c.chunk_id for c in resolve_chunks(src, ["2", "1"])] == ["2", "1"]
    with pytest.raises(StaleIndexError, match="not in the chunk store"):
        resolve_chunks(src, ["1", "3"])
    ps = to_passages(src, ["2", "1"], [0.9, 0.5], "bm25")
    assert [(p.chunk.chunk_id, p.rank, p.source) for p in ps] == [("2", 1, "bm25"), ("1", 2, "bm25")]


def test_index_dir_under_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    assert index_dir("bm25") == tmp_path / "indexes" / "bm25"
    assert index_dir("dense", ["b", "a"]) == tmp_path / "indexes" / "dense-a+b"
