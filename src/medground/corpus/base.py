"""The Reader protocol and the bad-input policy shared by every reader."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from medground.schema import Document


class BadInputError(ValueError):
    """Input that cannot be read: says which file, where in it, and what was expected."""

    def __init__(self, path: str | Path, where: str, expected: str, found: str | None = None):
        self.path, self.where, self.expected, self.found = str(path), where, expected, found
        msg = f"{path}: {where}: expected {expected}"
        if found is not None:
            msg += f", found {found}"
        super().__init__(msg)


@dataclass(slots=True)
class BadRecord:
    path: str
    where: str
    message: str


@dataclass
class ErrorPolicy:
    """``skip=False``: the first bad record raises. ``skip=True``: it is listed and skipped."""

    skip: bool = False
    problems: list[BadRecord] = field(default_factory=list)

    def handle(self, err: BadInputError) -> None:
        if not self.skip:
            raise err
        self.problems.append(BadRecord(err.path, err.where, str(err)))


@runtime_checkable
class Reader(Protocol):
    """Turns one source unit (a file, or a directory such as an OpenStax book) into Documents."""

    name: str

    def discover(self, root: Path) -> list[Path]:
        """The source units under ``root`` this reader understands, in a stable order."""
        ...

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        ...
