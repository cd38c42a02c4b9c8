"""The four published methods (and closed book) as pipelines built from one typed config.

Its public names are importable from here (``from medground.pipelines import Pipeline``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.pipelines.base import Pipeline as Pipeline
    from medground.pipelines.config import (
        PipelineConfig as PipelineConfig,
        load_pipeline_config as load_pipeline_config,
    )
    from medground.pipelines.factory import build_pipeline as build_pipeline

_EXPORTS = {
    "Pipeline": "medground.pipelines.base",
    "PipelineConfig": "medground.pipelines.config",
    "load_pipeline_config": "medground.pipelines.config",
    "build_pipeline": "medground.pipelines.factory",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
