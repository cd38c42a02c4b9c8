"""Storage on the ground floor, below corpus and index: the chunk store (SQLite ``chunks.py``,
PostgreSQL ``postgres.py``, chosen by ``settings.py``: ``StoreSettings`` and ``open_store``), its
statistics (``stats.py``), and the medicine database (``drugs.py``). The drug domain types live in
``medground.drug_schema`` so every layer can import them downward.

Its public names are importable from here (``from medground.store import open_store``); each is
imported on first use, so importing the package imports none of its backends."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.store.drugs import DrugStore as DrugStore
    from medground.store.protocol import ChunkStoreProtocol as ChunkStoreProtocol
    from medground.store.settings import StoreSettings as StoreSettings, open_store as open_store

_EXPORTS = {
    "open_store": "medground.store.settings",
    "StoreSettings": "medground.store.settings",
    "ChunkStoreProtocol": "medground.store.protocol",
    "DrugStore": "medground.store.drugs",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
