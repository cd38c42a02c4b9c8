"""One registry: a YAML config names a component by (kind, name); code registers factories.

    @register("retriever", "bm25")
    def make_bm25(settings: BM25Settings, ...) -> Retriever: ...

    create("retriever", "bm25", settings=...)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_FACTORIES: dict[tuple[str, str], Callable[..., Any]] = {}

KINDS = ("reader", "chunker", "embedder", "index", "retriever", "fuser", "reranker", "llm", "pipeline")


class UnknownComponentError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; we want it readable
        return str(self.args[0])


def register(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r}; expected one of {KINDS}")

    def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
        key = (kind, name)
        if key in _FACTORIES and _FACTORIES[key] is not factory:
            raise ValueError(f"{kind} {name!r} is registered twice")
        _FACTORIES[key] = factory
        return factory

    return deco


def names(kind: str, *, load: bool = True) -> list[str]:
    """Registered names of ``kind``; ``load=False``: only what modules imported so far registered
    (a module asking about its own components need not import every other built-in)."""
    if load:
        _load_builtins()
    return sorted(n for k, n in _FACTORIES if k == kind)


def get(kind: str, name: str, *, load: bool = True) -> Callable[..., Any]:
    if load or (kind, name) not in _FACTORIES:
        _load_builtins()
    try:
        return _FACTORIES[(kind, name)]
    except KeyError:
        raise UnknownComponentError(
            f"no {kind} named {name!r}; known: {', '.join(names(kind)) or '(none)'}"
        ) from None


def create(kind: str, name: str, /, **kwargs: Any) -> Any:
    return get(kind, name)(**kwargs)


_loaded = False
_lock = threading.RLock()
_loading = threading.local()


def _load_builtins() -> None:
    """Import the modules whose import registers the built-in components.

    Thread-safe: the registry counts as loaded only after every import finished, and other
    threads wait for that (a server's first requests arrive together). A module that asks the
    registry while it is being imported (same thread) gets what is registered so far.
    """
    global _loaded
    if _loaded or getattr(_loading, "active", False):
        return
    import importlib

    with _lock:
        if _loaded:
            return
        _loading.active = True
        try:
            for mod in _BUILTIN_MODULES:
                try:
                    importlib.import_module(mod)
                except ImportError as exc:  # an optional extra is missing: its components are absent
                    if getattr(exc, "name", "") and str(exc.name).startswith("medground"):
                        raise
            _loaded = True
        finally:
            _loading.active = False


# Modules that register components on import. Optional extras may be missing.
_BUILTIN_MODULES: list[str] = [
    "medground.corpus.readers",
    "medground.corpus.readers_formats",
    "medground.corpus.openstax",
    "medground.corpus.chunking",
    "medground.index.bm25",
    "medground.index.dense",
    "medground.index.embedders",
    "medground.index.sections",
    "medground.index.splade",
    "medground.retrieve.fusion",
    "medground.retrieve.rerank",
    "medground.retrieve.maxsim",
    "medground.llm.rerank",
    "medground.retrieve.drugs",
    "medground.llm.local",
    "medground.llm.remote",
    "medground.llm.hf",
    "medground.pipelines.factory",
]
