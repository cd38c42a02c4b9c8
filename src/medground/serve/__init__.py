"""HTTP API and consultation web page (the ``serve`` extra: FastAPI + uvicorn).

Its public names are importable from here (``from medground.serve import create_app``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.serve.api import create_app as create_app, ServeSettings as ServeSettings

_EXPORTS = {
    "create_app": "medground.serve.api",
    "ServeSettings": "medground.serve.api",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
