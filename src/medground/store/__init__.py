"""Storage on the ground floor, below corpus and index: the chunk store (SQLite ``chunks.py``,
PostgreSQL ``postgres.py``, chosen by ``settings.py``: ``StoreSettings`` and ``open_store``), its
statistics (``stats.py``), and the medicine database (``drugs.py``). The drug domain types live in
``medground.drug_schema`` so every layer can import them downward.

Its public names are importable from here (``from medground.store import open_store``); each is
imported on first use, so importing the package imports none of its backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.store.drugs import DrugStore as DrugStore
    from medground.store.protocol import ChunkStoreProtocol as ChunkStoreProtocol
    from medground.store.settings import StoreSettings as StoreSettings, open_store as open_store

__getattr__, __all__ = lazy_exports(__name__, __file__)
