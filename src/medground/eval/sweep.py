"""A YAML grid of configurations → runs (cartesian product, exclude, include) → results.

    name: study
    datasets: [{name: mirage/medqa, subset: 200, seed: 0}]
    base: {pipeline: rag, retrieve: {top: 8}, llm: {model: qwen2.5-1.5b}}
    base_axes: {family: rag}            # labels every product run carries
    axes:
      retrieval:                        # label -> patch deep-merged into base
        dense: {retrieve: {retrievers: [dense]}}
        hybrid: {retrieve: {retrievers: [bm25, dense], fusion: rrf}}
      prompt: {key: reader.prompt, values: [zero-shot, cot]}   # shorthand: label = value at key
    exclude: [{retrieval: dense, prompt: cot}]
    include: [{axes: {family: no-rag, llm: "*"}, set: {pipeline: direct}}]
    concurrency: 8                      # questions in flight per run (an HTTP LLM server); default 1

Each run gets ``run_id`` = sha256 of its config and dataset (stable: same config, same id,
so re-running a grid resumes it) and a readable ``name`` built from its axis labels.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medground.configio import load_yaml
from medground.eval.datasets import load_dataset, subset
from medground.eval.runner import (
    PipelineFactory,
    QuestionExecutor,
    RunAbortedError,
    RunSummary,
    make_executor,
    run_questions,
)
from medground.schema import Question

log = logging.getLogger(__name__)


def _label(value: Any) -> str:
    # YAML 1.1 reads on/off/yes/no as booleans; an axis label is always a string.
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value is None:
        return "none"
    return str(value)


class CrossFitSpec(BaseModel):
    """The fold of a question as `train biencoder --crossfit-fold` splits them (``question_fold``),
    so a fold's model reads only questions it never trained on."""

    model_config = ConfigDict(extra="forbid")
    fold: int = Field(ge=0)
    folds: int = Field(2, ge=2)
    seed: int = 0

    @model_validator(mode="after")
    def _fold_in_range(self) -> "CrossFitSpec":
        if self.fold >= self.folds:
            raise ValueError(f"fold {self.fold} is not one of the {self.folds} folds (0 .. {self.folds - 1})")
        return self


class DatasetSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    split: str | None = None
    path: str | None = None
    subset: int | None = Field(default=None, ge=1)
    seed: int = 0
    stratify_by: str | None = None
    # Cross-fitting: only the (subset's) questions of one fold. None leaves run ids as they were.
    crossfit: CrossFitSpec | None = None


class AxisValues(BaseModel):
    """Shorthand axis: each value is its own label and is set at the dotted ``key``."""

    model_config = ConfigDict(extra="forbid")
    key: str
    values: list[Any]


class IncludeRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    axes: dict[str, Any]  # axis -> label, list of labels, or "*" (every label of that axis)
    set: dict[str, Any] = Field(default_factory=dict)


class SweepSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "sweep"
    datasets: list[DatasetSpec] = Field(min_length=1)
    base: dict[str, Any] = Field(default_factory=dict)
    base_axes: dict[str, str] = Field(default_factory=dict)
    axes: dict[str, dict[str, dict[str, Any] | None] | AxisValues] = Field(default_factory=dict)
    exclude: list[dict[str, Any]] = Field(default_factory=list)
    include: list[IncludeRule] = Field(default_factory=list)
    # How many questions of a run are in flight at once (threads; with Ray, per worker). Not
    # part of any run's config: it changes how fast a run goes, never its records.
    concurrency: int = Field(1, ge=1)

    @field_validator("axes", mode="before")
    @classmethod
    def _labels_are_strings(cls, axes: Any) -> Any:
        if not isinstance(axes, dict):
            return axes
        return {a: ({_label(k): v for k, v in spec.items()} if isinstance(spec, dict) and "key" not in spec else spec)
                for a, spec in axes.items()}

    def axis_patches(self) -> dict[str, dict[str, dict[str, Any]]]:
        """axis -> label -> config patch, labels in the order written (the first is the baseline)."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for axis, spec in self.axes.items():
            if isinstance(spec, AxisValues):
                out[axis] = {_label(v): _dotted(spec.key, v) for v in spec.values}
            else:
                out[axis] = {label: dict(patch or {}) for label, patch in spec.items()}
        return out


@dataclass(slots=True)
class RunSpec:
    run_id: str
    name: str
    axes: dict[str, str]
    config: dict[str, Any]
    dataset: DatasetSpec
    axis_labels: dict[str, list[str]] = field(default_factory=dict)

    def meta(self) -> dict[str, Any]:
        """What config.json stores: enough to rebuild the run and to label it in reports."""
        return {"run_id": self.run_id, "name": self.name, "config_hash": self.run_id, "axes": self.axes,
                "axis_labels": self.axis_labels, "config": self.config,
                "dataset": self.dataset.model_dump(exclude_none=True)}


def _dotted(key: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = value
    for part in reversed(key.split(".")):
        out = {part: out}
    return out


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; any other value (lists included) replaces."""
    out = copy.deepcopy(base)
    for k, v in patch.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def config_hash(config: dict[str, Any], dataset: DatasetSpec) -> str:
    blob = json.dumps({"config": config, "dataset": dataset.model_dump(exclude_none=True)},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def _matches(axes: dict[str, str], rule: dict[str, Any]) -> bool:
    for axis, want in rule.items():
        wanted = {_label(w) for w in want} if isinstance(want, list) else {_label(want)}
        if axes.get(axis) not in wanted:
            return False
    return True


def expand(settings: SweepSettings) -> list[RunSpec]:
    """Every run of the grid, in a stable order (datasets outer, axes in written order)."""
    patches = settings.axis_patches()
    for rule in settings.exclude:
        for axis, want in rule.items():
            known = patches.get(axis)
            for w in want if isinstance(want, list) else [want]:
                if known is None or _label(w) not in known:
                    raise ValueError(f"exclude rule {rule}: axis {axis!r} has no label {_label(w)!r}; "
                                     f"known: { {a: list(p) for a, p in patches.items()} }")
    combos: list[tuple[dict[str, str], dict[str, Any]]] = []
    names = list(patches)
    for labels in itertools.product(*(patches[a] for a in names)):
        axes = {**settings.base_axes, **dict(zip(names, labels))}
        if any(_matches(axes, rule) for rule in settings.exclude):
            continue
        cfg = settings.base
        for a, lab in zip(names, labels):
            cfg = deep_merge(cfg, patches[a][lab])
        combos.append((axes, cfg))
    for rule in settings.include:
        choices = []
        for axis, want in rule.axes.items():
            if want == "*":
                if axis not in patches:
                    raise ValueError(f"include rule: '*' for axis {axis!r}, which the grid does not define")
                choices.append([(axis, lab) for lab in patches[axis]])
            else:
                choices.append([(axis, _label(w)) for w in (want if isinstance(want, list) else [want])])
        for pairs in itertools.product(*choices):
            axes = dict(pairs)
            cfg = settings.base
            for a, lab in pairs:
                cfg = deep_merge(cfg, patches.get(a, {}).get(lab, {}))
            combos.append((axes, deep_merge(cfg, rule.set)))
    axis_labels = {a: list(p) for a, p in patches.items()}
    runs: list[RunSpec] = []
    seen: dict[str, str] = {}
    for ds in settings.datasets:
        for axes, cfg in combos:
            rid = config_hash(cfg, ds)
            name = ds.name + "/" + ",".join(f"{a}={lab}" for a, lab in axes.items())
            if rid in seen:
                raise ValueError(f"runs {seen[rid]!r} and {name!r} have the same config; "
                                 "an axis label changes nothing, or an include repeats a product run")
            seen[rid] = name
            runs.append(RunSpec(rid, name, axes, cfg, ds, axis_labels))
    return runs


def load_sweep(path: str | Path) -> SweepSettings:
    return load_yaml(SweepSettings, path)


QuestionLoader = Callable[[DatasetSpec], list[Question]]


def default_loader(spec: DatasetSpec) -> list[Question]:
    qs = load_dataset(spec.name, path=spec.path, split=spec.split)
    qs = subset(qs, spec.subset, seed=spec.seed, stratify_by=spec.stratify_by)
    if spec.crossfit is None:
        return qs
    from medground.train.feedback import question_fold

    cf = spec.crossfit
    return [q for q in qs if question_fold(q, cf.folds, cf.seed) == cf.fold]


@dataclass(slots=True)
class SweepResult:
    summaries: list[RunSummary]
    failures: dict[str, str]  # run name -> why it stopped


def run_sweep(
    settings: SweepSettings,
    make_pipeline: PipelineFactory,
    runs_dir: str | Path,
    *,
    load_questions: QuestionLoader = default_loader,
    only: Callable[[RunSpec], bool] | None = None,
    retry_errors: bool = False,
    progress: bool = True,
    executor: QuestionExecutor | None = None,
) -> SweepResult:
    """Run (or resume) every run of the grid. A run that aborts does not stop the others.

    ``executor`` answers the questions (default: ``settings.concurrency`` threads, serial at 1);
    a Ray executor keeps its worker pool across runs, so each run's shards spread over it."""
    runs_dir = Path(runs_dir)
    executor = executor or make_executor(settings.concurrency)
    cache: dict[str, list[Question]] = {}
    summaries, failures = [], {}
    for spec in expand(settings):
        if only is not None and not only(spec):
            continue
        key = spec.dataset.model_dump_json()
        if key not in cache:
            cache[key] = load_questions(spec.dataset)
        try:
            summaries.append(run_questions(
                lambda spec=spec: make_pipeline(spec.config), cache[key], runs_dir / spec.run_id, spec.meta(),
                retry_errors=retry_errors, progress=progress, executor=executor))
        except RunAbortedError as exc:
            log.error("%s", exc)
            failures[spec.name] = str(exc)
    return SweepResult(summaries, failures)
