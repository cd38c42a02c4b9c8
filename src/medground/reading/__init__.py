"""Readers: what turns retrieved evidence into an answer — multiple choice, free text with its
support checks, and the consultation reply.

Its public names are importable from here (``from medground.reading import ReaderSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.reading.reader import ReaderSettings as ReaderSettings
    from medground.reading.choice import (
        read_choice as read_choice,
        read_grounded_choice as read_grounded_choice,
        choice_answer as choice_answer,
    )
    from medground.reading.freetext import free_text_answer as free_text_answer
    from medground.reading.consult import (
        ConsultReader as ConsultReader,
        ConsultReplySettings as ConsultReplySettings,
    )

_EXPORTS = {
    "ReaderSettings": "medground.reading.reader",
    "read_choice": "medground.reading.choice",
    "read_grounded_choice": "medground.reading.choice",
    "choice_answer": "medground.reading.choice",
    "free_text_answer": "medground.reading.freetext",
    "ConsultReader": "medground.reading.consult",
    "ConsultReplySettings": "medground.reading.consult",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
