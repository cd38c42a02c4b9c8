"""Queries → ranked Passages → fused → reranked → packed Evidence; and the medicine database's
entity-first search.

Its public names are importable from here (``from medground.retrieve import RetrievalEngine``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.retrieve.engine import (
        RetrievalEngine as RetrievalEngine,
        RetrieveSettings as RetrieveSettings,
    )
    from medground.retrieve.drugs import DrugRetriever as DrugRetriever
    from medground.retrieve.drug_subject import resolve_subjects as resolve_subjects

__getattr__, __all__ = lazy_exports(__name__, __file__)
