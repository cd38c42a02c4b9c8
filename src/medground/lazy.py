"""A package's public face without import cost (PEP 562): each exported name is imported from its
module on first use, so ``import medground.store`` loads none of the store's backends.

The names are written once, as the package's ``if TYPE_CHECKING:`` imports (what type checkers
and IDEs read); ``lazy_exports`` reads that block from the package's own source, so the names a
checker sees and the names the package serves cannot drift apart."""

from __future__ import annotations

import ast
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any


def checking_imports(init_file: str) -> dict[str, str]:
    """Exported name -> its module, from the absolute ``from … import …`` statements of the file's
    top-level ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), filename=init_file)
    where: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if not isinstance(stmt, ast.ImportFrom) or stmt.level or stmt.module is None:
                    raise ValueError(f"{init_file}:{stmt.lineno}: expected an absolute 'from … import …' "
                                     "in the TYPE_CHECKING block")
                where.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    if not where:
        raise ValueError(f"{init_file}: no 'if TYPE_CHECKING:' imports to export")
    return where


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], list[str]]:
    """``(__getattr__, __all__)`` for ``package``, whose ``__init__`` is ``init_file``."""
    where = checking_imports(init_file)

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(where[name]), name)

    return __getattr__, sorted(where)
