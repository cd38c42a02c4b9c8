"""Readers: what turns retrieved evidence into an answer — multiple choice, free text with its
support checks, and the consultation reply.

Its public names are importable from here (``from medground.reading import ReaderSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.reading.reader import ReaderSettings as ReaderSettings
    from medground.reading.choice import (
        read_choice as read_choice,
        read_grounded_choice as read_grounded_choice,
        choice_answer as choice_answer,
    )
    from medground.reading.freetext import free_text_answer as free_text_answer
    from medground.reading.consult import ConsultReader as ConsultReader
    from medground.reading.consult_settings import ConsultReplySettings as ConsultReplySettings

__getattr__, __all__ = lazy_exports(__name__, __file__)
