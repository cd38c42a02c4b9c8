from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def reader_over(tmp_path_factory):
    """A consultation reader (the real MiniLM and shipped typer) over a small database built from
    the given ``DrugCatalog`` (``reader_args``: ConsultReader's own, e.g. a lay vocabulary)."""
    pytest.importorskip("onnxruntime")

    def build(catalog, **reader_args):
        from medground.reading.consult import ConsultReader
        from medground.reading.consult_typer import load_consult_typer
        from medground.retrieve.drugs import DrugRetriever
        from medground.store.drugs import DrugStore

        store = DrugStore(tmp_path_factory.mktemp("drugs") / "drugs.sqlite")
        store.build(catalog)
        typer = load_consult_typer()
        reader = ConsultReader(DrugRetriever(store), typer, typer.embedder, **reader_args)
        # the reader sees exactly the catalog it was given
        assert set(reader.drugs.drugs) == {d.drug_id for d in catalog.drugs}
        assert len(reader.drugs.attributes) == len(catalog.attributes)
        return reader

    return build
