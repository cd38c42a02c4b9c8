"""A typed view of a run's configuration for reports: the study's columns, "—" when absent.

Labels come from the run's ``axes`` (written by the sweep); when a run was made without a
sweep (``medground eval``), they are read from well-known config keys instead.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

MISSING = "—"
BASELINE_FAMILIES = {"no-rag", "norag", "none", "direct", "closed-book", "baseline"}


def _get(config: dict[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _fmt(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return "+".join(_fmt(v) for v in value)  # e.g. retrievers given as {name, settings}
    if isinstance(value, dict):
        return str(value.get("name") or value.get("model") or value)
    return str(value)


# column -> config keys tried when the run has no axis label for it
_FALLBACK_KEYS = {
    "family": ("pipeline",),
    "index": ("index", "retrieve.embedder", "embedder"),
    "retrieval": ("retrieve.retrievers", "retrieval"),
    "coarse": ("retrieve.sections", "coarse"),
    "reranker": ("retrieve.rerank", "reranker"),
    "reformulation": ("reformulate", "reformulation"),
    "prompt": ("reader.prompt", "prompt"),
    "llm": ("llm.model", "llm"),
}


_RETRIEVAL_COLUMNS = {"index", "retrieval", "coarse", "reranker", "reformulation"}


@dataclass(frozen=True, slots=True)
class RunAxes:
    dataset: str = MISSING
    family: str = MISSING
    index: str = MISSING
    retrieval: str = MISSING
    coarse: str = MISSING
    reranker: str = MISSING
    reformulation: str = MISSING
    prompt: str = MISSING
    llm: str = MISSING

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> RunAxes:
        axes = meta.get("axes") or {}
        config = meta.get("config") or {}
        values: dict[str, str] = {}
        for f in fields(cls):
            if f.name == "dataset":
                ds = meta.get("dataset") or {}
                values["dataset"] = _fmt(ds.get("name") if isinstance(ds, dict) else ds)
            elif f.name in axes:
                values[f.name] = _fmt(axes[f.name])
            elif f.name in _RETRIEVAL_COLUMNS and config.get("pipeline") == "direct":
                values[f.name] = MISSING  # closed book: its config may still carry a retrieve section
            else:
                found = next((v for k in _FALLBACK_KEYS[f.name] if (v := _get(config, k)) is not None), None)
                values[f.name] = _fmt(found)
        return cls(**values)

    @property
    def is_baseline(self) -> bool:
        return self.family.lower() in BASELINE_FAMILIES

    def as_row(self) -> list[str]:
        return [getattr(self, f.name) for f in fields(self)]


COLUMNS = [f.name for f in fields(RunAxes)]
