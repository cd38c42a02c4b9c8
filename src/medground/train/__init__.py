"""Training from LLM feedback: relevance labels (feedback.py) and retrievers and rerankers
fine-tuned on them.

Its public names are importable from here (``from medground.train import FeedbackSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.train.feedback import (
        FeedbackSettings as FeedbackSettings,
        judge as judge,
        collect as collect,
        load_feedback as load_feedback,
    )

__getattr__, __all__ = lazy_exports(__name__, __file__)
