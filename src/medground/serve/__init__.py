"""HTTP API and consultation web page (the ``serve`` extra: FastAPI + uvicorn).

Its public names are importable from here (``from medground.serve import create_app``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.serve.api import create_app as create_app, ServeSettings as ServeSettings

__getattr__, __all__ = lazy_exports(__name__, __file__)
