"""Run one pipeline over questions, recording each answer as it comes; resumable.

A pipeline is anything with ``name`` and ``answer(question) -> Answer`` (see ``Pipeline``).
Runtime is the sum of per-question seconds measured around ``answer``, so a run resumed
three times reports the same runtime as one that ran straight through.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from medground.eval.metrics import wilson_ci
from medground.eval.records import (
    CONFIG,
    SUMMARY,
    RecordLog,
    error_record,
    read_records,
    record_from_answer,
    write_json_atomic,
)
from medground.schema import Answer, Question


@runtime_checkable
class Pipeline(Protocol):
    name: str

    def answer(self, question: Question) -> Answer: ...


PipelineFactory = Callable[[dict[str, Any]], Pipeline]  # run config -> pipeline


class RunAbortedError(RuntimeError):
    pass


@dataclass(slots=True)
class RunSummary:
    run_id: str
    name: str
    n_questions: int  # in the question set
    n_done: int  # with a record
    n_new: int  # answered in this session
    n_correct: int
    n_scored: int  # multiple-choice records (free text has correct=None)
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    parse_failures: int
    errors: int
    runtime_s: float  # sum of per-question seconds over all sessions
    throughput_qps: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(run_id: str, name: str, records: Sequence[dict[str, Any]], n_questions: int, n_new: int = 0) -> RunSummary:
    scored = [bool(r["correct"]) for r in records if r.get("correct") is not None]
    runtime = sum(float(r.get("seconds") or 0.0) for r in records)
    ci = wilson_ci(scored) if scored else None
    return RunSummary(
        run_id=run_id, name=name, n_questions=n_questions, n_done=len(records), n_new=n_new,
        n_correct=sum(scored), n_scored=len(scored),
        accuracy=sum(scored) / len(scored) if scored else None,
        ci_low=ci.low if ci else None, ci_high=ci.high if ci else None,
        parse_failures=sum(r.get("outcome") == "parse_failure" for r in records),
        errors=sum(r.get("outcome") == "error" for r in records),
        runtime_s=round(runtime, 6), throughput_qps=len(records) / runtime if runtime > 0 else None,
    )


def write_config(run_dir: Path, meta: dict[str, Any]) -> None:
    """config.json is written once; a different config under the same run id is an error."""
    path = run_dir / CONFIG
    if path.exists():
        import json

        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("config_hash") and old.get("config_hash") != meta.get("config_hash"):
            raise RunAbortedError(f"{path}: holds a different config (hash {old['config_hash']}); "
                                  "refusing to mix results of two configs in one run directory")
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, meta)


def run_questions(
    pipeline: Pipeline | Callable[[], Pipeline],
    questions: Sequence[Question],
    run_dir: str | Path,
    meta: dict[str, Any] | None = None,
    *,
    retry_errors: bool = False,
    max_consecutive_errors: int = 5,
    progress: bool = True,
) -> RunSummary:
    """Answer every question without a record yet; append a record per answer.

    ``pipeline`` may be a zero-argument factory: it is only called when work remains, so a
    finished run costs no model load. ``max_consecutive_errors`` aborts a run whose pipeline
    keeps failing (a server down) instead of recording an error for every question; resume
    with ``retry_errors=True`` to redo the questions that errored.
    """
    run_dir = Path(run_dir)
    meta = dict(meta or {})
    run_id, name = meta.setdefault("run_id", run_dir.name), meta.setdefault("name", run_dir.name)
    write_config(run_dir, meta)
    ids = [q.qid for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError(f"run {name}: question ids are not unique")
    n_new = 0
    with RecordLog(run_dir) as log:
        todo = [q for q in questions if q.qid not in log.done_qids(retry_errors)]
        if todo:
            pipe = pipeline if isinstance(pipeline, Pipeline) else pipeline()
            streak = 0
            for q in _progress(todo, name, progress):
                t0 = time.perf_counter()
                try:
                    ans = pipe.answer(q)
                    rec = record_from_answer(q, ans, time.perf_counter() - t0)
                    streak = 0
                except Exception as exc:  # one bad question must not end the run; recorded as an error
                    rec = error_record(q, exc, time.perf_counter() - t0)
                    streak += 1
                log.append(rec)
                n_new += 1
                if max_consecutive_errors and streak >= max_consecutive_errors:
                    raise RunAbortedError(
                        f"run {name}: {streak} questions in a row failed (last: {rec.error}); "
                        f"fix the cause and resume with retry_errors / --retry-errors")
    wanted = set(ids)
    records = [r for r in read_records(run_dir / "results.jsonl") if r["qid"] in wanted]
    summary = summarize(run_id, name, records, len(questions), n_new)
    write_json_atomic(run_dir / SUMMARY, summary.to_dict())
    return summary


def _progress(items: Sequence[Question], desc: str, enabled: bool):
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc[:40], unit="q", leave=False)
