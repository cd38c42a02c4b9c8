"""Build a pipeline from its config. LLMs and retrieval engines are shared between pipelines
whose settings agree, so a sweep loads each model and index once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from medground import registry
from medground.registry import register
from medground.llm.base import LLM, LLMSettings
from medground.pipelines.amt import AmtPipeline
from medground.pipelines.base import Pipeline
from medground.pipelines.config import PipelineConfig, pipeline_config
from medground.pipelines.direct import DirectPipeline
from medground.pipelines.drugrag import DrugRagPipeline
from medground.pipelines.imedrag import IMedRagPipeline
from medground.pipelines.rag import RagPipeline
from medground.retrieve.engine import RetrievalEngine, RetrieveSettings

_LLMS: dict[str, LLM] = {}
_ENGINES: dict[str, RetrievalEngine] = {}


def shared_llm(settings: LLMSettings) -> LLM:
    key = settings.model_dump_json()
    if key not in _LLMS:
        _LLMS[key] = registry.create("llm", settings.backend, settings=settings)
    return _LLMS[key]


def shared_engine(settings: RetrieveSettings, *, build_if_missing: bool = True) -> RetrievalEngine:
    key = settings.model_dump_json()
    if key not in _ENGINES:
        _ENGINES[key] = RetrievalEngine(settings, build_if_missing=build_if_missing)
    return _ENGINES[key]


def build_pipeline(config: PipelineConfig | dict[str, Any], *, llm: LLM | None = None,
                   engine: RetrievalEngine | None = None) -> Pipeline:
    cfg = pipeline_config(config)
    llm = llm or shared_llm(cfg.llm)

    def get_engine() -> RetrievalEngine:
        return engine or shared_engine(cfg.retrieve)

    pipe: Pipeline = registry.create("pipeline", cfg.pipeline, config=cfg, llm=llm, engine=get_engine)
    pipe.name = cfg.label
    return pipe


# Built-in pipelines. A plug-in registers its own the same way and names it in `pipeline:`.
@register("pipeline", "direct")
def _direct(config: PipelineConfig, llm: LLM, engine: Callable[[], RetrievalEngine]) -> Pipeline:
    return DirectPipeline(llm, config.reader)


@register("pipeline", "rag")
def _rag(config: PipelineConfig, llm: LLM, engine: Callable[[], RetrievalEngine]) -> Pipeline:
    return RagPipeline(llm, engine(), config.reader, reformulate=config.reformulate)


@register("pipeline", "amt")
def _amt(config: PipelineConfig, llm: LLM, engine: Callable[[], RetrievalEngine]) -> Pipeline:
    return AmtPipeline(llm, engine(), config.amt, config.reader)


@register("pipeline", "imedrag")
def _imedrag(config: PipelineConfig, llm: LLM, engine: Callable[[], RetrievalEngine]) -> Pipeline:
    return IMedRagPipeline(llm, engine(), config.imedrag, config.reader)


@register("pipeline", "drugrag")
def _drugrag(config: PipelineConfig, llm: LLM, engine: Callable[[], RetrievalEngine]) -> Pipeline:
    return DrugRagPipeline(llm, engine(), config.drugrag, config.reader)


def make_pipeline(run_config: dict[str, Any]) -> Pipeline:
    """The eval/sweep hook: a run's config dict → a ready pipeline."""
    return build_pipeline(pipeline_config(run_config, source="run config"))
