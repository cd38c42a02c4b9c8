"""A package's public face without import cost (PEP 562): each exported name is imported from its
module on first use, so ``import medground.store`` loads none of the store's backends."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, Sequence[str]]) -> tuple[Callable[[str], Any], list[str]]:
    """``(__getattr__, __all__)`` for ``package``; ``modules``: module path -> the names it exports."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(where[name]), name)

    return __getattr__, sorted(where)
