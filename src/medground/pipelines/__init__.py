"""The four published methods (and closed book) as pipelines built from one typed config.

Its public names are importable from here (``from medground.pipelines import Pipeline``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.pipelines.base import Pipeline as Pipeline
    from medground.pipelines.config import (
        PipelineConfig as PipelineConfig,
        load_pipeline_config as load_pipeline_config,
    )
    from medground.pipelines.factory import build_pipeline as build_pipeline

__getattr__, __all__ = lazy_exports(__name__, __file__)
