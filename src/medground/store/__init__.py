"""Storage on the ground floor, below corpus and index: the chunk store (SQLite ``chunks.py``,
PostgreSQL ``postgres.py``, chosen by ``settings.py``: ``StoreSettings`` and ``open_store``), its
statistics (``stats.py``), and the medicine database (``drugs.py``). The drug domain types live in
``medground.drug_schema`` so every layer can import them downward.

Submodules are imported by their own names (``from medground.store.chunks import ChunkStore``);
this package imports none of them, so storage stays cheap to reach."""
