"""The pipeline config: one typed YAML document that fully describes a run.

    pipeline: amt
    llm: {backend: local, model: qwen2.5-coder-1.5b}
    retrieve: {retrievers: [bm25, dense], fusion: norm, top: 32}
    amt: {passages: 4}

It is stored with every result (eval/records), so a number can always be traced to the exact
components that produced it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medground.configio import load_yaml, parse_model
from medground.llm.base import LLMSettings
from medground.pipelines.amt import AmtSettings
from medground.pipelines.base import ReaderSettings
from medground.pipelines.drugrag_settings import DRUG_RETRIEVE, DrugRagSettings
from medground.pipelines.imedrag import IMedRagSettings
from medground.retrieve.engine import RetrieveSettings


# LLM-AMT's retriever: sparse + dense, min-max normalized scores summed, 32 candidates.
AMT_RETRIEVE = {"retrievers": ["bm25", "dense"], "fusion": "norm", "top": 32, "final_k": 4,
                "budget_tokens": 4000}


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pipeline: str = Field("rag", description="a registered pipeline: direct, rag, amt, imedrag, ...")
    name: str | None = Field(None, description="a label for reports; defaults to the pipeline name")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)
    reformulate: bool = Field(False, description="rag: add a keyword reformulation as an extra query")
    amt: AmtSettings = Field(default_factory=AmtSettings)
    imedrag: IMedRagSettings = Field(default_factory=IMedRagSettings)
    drugrag: DrugRagSettings = Field(default_factory=DrugRagSettings)

    @model_validator(mode="before")
    @classmethod
    def _method_defaults(cls, data: Any) -> Any:
        # Each method's published retrieval set-up is its default; an explicit retrieve wins.
        defaults = {"amt": AMT_RETRIEVE, "drugrag": DRUG_RETRIEVE}
        if isinstance(data, dict) and data.get("pipeline") in defaults and "retrieve" not in data:
            data = {**data, "retrieve": dict(defaults[data["pipeline"]])}
        return data

    @field_validator("pipeline")
    @classmethod
    def _known(cls, v: str) -> str:
        from medground import registry

        known = registry.names("pipeline")
        if v not in known:
            raise ValueError(f"unknown pipeline {v!r}; expected one of {', '.join(known)}")
        return v

    @property
    def label(self) -> str:
        return self.name or self.pipeline


# The configs shipped with the project; `--pipeline rag` means configs/pipelines/rag.yaml in the
# CLI (ask, eval) and in the server alike.
from medground.paths import SHIPPED_CONFIGS as SHIPPED  # noqa: E402


def shipped_names() -> list[str]:
    return sorted(p.stem for p in SHIPPED.glob("*.yaml")) if SHIPPED.is_dir() else []


def resolve_pipeline(spec: str | Path) -> Path:
    """A shipped config's name (``rag`` → configs/pipelines/rag.yaml) or a path to a YAML file."""
    from medground.configio import ConfigError

    text = str(spec).strip()
    path = Path(text)
    if path.suffix in {".yaml", ".yml"} or "/" in text or path.exists():
        if not path.is_file():
            raise ConfigError(f"{path}: pipeline config file not found")
        return path
    shipped = SHIPPED / f"{text}.yaml"
    if shipped.is_file():
        return shipped
    raise ConfigError(f"{text!r} is neither a shipped pipeline config ({', '.join(shipped_names()) or 'none found'}) "
                      "nor a path to a YAML file")


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Load a config by shipped name or path (typos are errors naming file, line and key)."""
    return load_yaml(PipelineConfig, resolve_pipeline(path))


def pipeline_config(data: dict[str, Any] | PipelineConfig, source: str = "<config>") -> PipelineConfig:
    return data if isinstance(data, PipelineConfig) else parse_model(PipelineConfig, data, source=source)
