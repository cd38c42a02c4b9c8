"""Queries → ranked Passages → fused → reranked → packed Evidence; and the medicine database's
entity-first search.

Its public names are importable from here (``from medground.retrieve import RetrievalEngine``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.retrieve.engine import (
        RetrievalEngine as RetrievalEngine,
        RetrieveSettings as RetrieveSettings,
    )
    from medground.retrieve.drugs import DrugRetriever as DrugRetriever
    from medground.retrieve.drug_subject import resolve_subjects as resolve_subjects

_EXPORTS = {
    "RetrievalEngine": "medground.retrieve.engine",
    "RetrieveSettings": "medground.retrieve.engine",
    "DrugRetriever": "medground.retrieve.drugs",
    "resolve_subjects": "medground.retrieve.drug_subject",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
