"""Training from LLM feedback: relevance labels (feedback.py) and retrievers and rerankers
fine-tuned on them.

Its public names are importable from here (``from medground.train import FeedbackSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.train.feedback import (
        FeedbackSettings as FeedbackSettings,
        judge as judge,
        collect as collect,
        load_feedback as load_feedback,
    )

_EXPORTS = {
    "FeedbackSettings": "medground.train.feedback",
    "judge": "medground.train.feedback",
    "collect": "medground.train.feedback",
    "load_feedback": "medground.train.feedback",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
