"""Both chunk-store backends implement the one protocol, reads and writes, with the same
parameters: code written against one runs on the other (issue 29, item 3)."""

import inspect

import pytest

from medground.store.protocol import ChunkStoreProtocol

METHODS = [m for m in dir(ChunkStoreProtocol) if not m.startswith("_")]


def _backends():
    from medground.store.chunks import ChunkStore

    out = [ChunkStore]
    try:
        from medground.store.postgres import PgChunkStore
    except ImportError:  # the [postgres] extra is missing
        return out
    return [*out, PgChunkStore]


def test_the_protocol_covers_reads_and_writes():
    assert {"iter_chunks", "get_chunks", "fingerprint", "documents", "replace_unit", "remove_unit"} <= set(METHODS)


@pytest.mark.parametrize("backend", _backends(), ids=lambda b: b.__name__)
def test_every_backend_implements_every_method_with_the_same_parameters(backend):
    for name in METHODS:
        assert hasattr(backend, name), f"{backend.__name__} lacks {name}"
        want = list(inspect.signature(getattr(ChunkStoreProtocol, name)).parameters)
        got = list(inspect.signature(getattr(backend, name)).parameters)
        assert got == want, f"{backend.__name__}.{name}{got} differs from the protocol's {want}"


def test_an_open_sqlite_store_is_a_chunk_store(tmp_path):
    from medground.store.chunks import ChunkStore

    with ChunkStore(tmp_path / "store.sqlite") as store:
        assert isinstance(store, ChunkStoreProtocol)
