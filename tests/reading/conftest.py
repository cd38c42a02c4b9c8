from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def reader_over(tmp_path_factory):
    """A consultation reader (the real MiniLM and shipped typer) over a small database built from
    the given ``DrugCatalog``."""
    pytest.importorskip("onnxruntime")

    def build(catalog):
        from medground.reading.consult import ConsultReader
        from medground.reading.consult_typer import load_consult_typer
        from medground.retrieve.drugs import DrugRetriever
        from medground.store.drugs import DrugStore

        store = DrugStore(tmp_path_factory.mktemp("drugs") / "drugs.sqlite")
        store.build(catalog)
        typer = load_consult_typer()
        return ConsultReader(DrugRetriever(store), typer, typer.embedder)

    return build
