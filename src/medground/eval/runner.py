"""Run one pipeline over questions, recording each answer as it comes; resumable.

A pipeline is anything with ``name`` and ``answer(question) -> Answer`` (see ``Pipeline``).
Runtime is the sum of per-question seconds measured around ``answer``, so a run resumed
three times reports the same runtime as one that ran straight through (with concurrency it
is the serial-equivalent time, not the wall time).

Who answers is the executor's business: one question at a time (``SerialExecutor``, the
default), N at a time on threads (``ThreadExecutor``: N requests in flight to an
OpenAI-compatible server), or shards on Ray workers (``eval.distributed.RayExecutor``).
Whatever answers, this process stays the only writer of results.jsonl and appends each
record as it arrives, so a killed driver or a lost worker loses only the questions in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from medground.eval.metrics import wilson_ci
from medground.eval.records import (
    CONFIG,
    SUMMARY,
    RecordLog,
    RunRecord,
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


def answer_one(pipe: Pipeline, question: Question) -> RunRecord:
    """One question's record; a pipeline exception becomes an error record, never a crash."""
    t0 = time.perf_counter()
    try:
        ans = pipe.answer(question)
        return record_from_answer(question, ans, time.perf_counter() - t0)
    except Exception as exc:  # one bad question must not end the run; recorded as an error
        return error_record(question, exc, time.perf_counter() - t0)


@runtime_checkable
class QuestionExecutor(Protocol):
    """Answers a run's remaining questions and yields a record per question as it completes
    (any order; records carry their qid). ``key`` names the run (workers cache pipelines by
    it); ``make`` builds the pipeline and is called only where questions are answered.
    Closing the iterator early (an aborted run) must stop handing out further questions."""

    def answers(self, key: str, make: Callable[[], Pipeline], todo: Sequence[Question]) -> Iterator[RunRecord]: ...


class SerialExecutor:
    """One question at a time in this process (the default)."""

    def answers(self, key: str, make: Callable[[], Pipeline], todo: Sequence[Question]) -> Iterator[RunRecord]:
        pipe = make()
        for q in todo:
            yield answer_one(pipe, q)


class ThreadExecutor:
    """``concurrency`` questions in flight on threads sharing one pipeline: for pipelines
    that wait on an HTTP server (vLLM), not for an in-process model. The built-in pipelines
    keep per-answer state in a local ``Tally``, and the LLM client and its cache are safe to
    share between threads."""

    def __init__(self, concurrency: int):
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency

    def answers(self, key: str, make: Callable[[], Pipeline], todo: Sequence[Question]) -> Iterator[RunRecord]:
        pipe = make()  # built here, once: the factory's shared caches are not meant for racing threads
        pending: set[Future[RunRecord]] = set()
        queue = iter(todo)
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="medground-q")
        try:
            while True:
                # A window of `concurrency` questions: an abort leaves nothing queued behind it.
                for q in queue:
                    pending.add(pool.submit(answer_one, pipe, q))
                    if len(pending) >= self.concurrency:
                        break
                if not pending:
                    return
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield fut.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def make_executor(concurrency: int = 1) -> QuestionExecutor:
    return SerialExecutor() if concurrency == 1 else ThreadExecutor(concurrency)


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


def summarize(run_id: str, name: str, records: Sequence[RunRecord], n_questions: int, n_new: int = 0) -> RunSummary:
    scored = [r.correct for r in records if r.correct is not None]
    runtime = sum(r.seconds for r in records)
    ci = wilson_ci(scored) if scored else None
    return RunSummary(
        run_id=run_id, name=name, n_questions=n_questions, n_done=len(records), n_new=n_new,
        n_correct=sum(scored), n_scored=len(scored),
        accuracy=sum(scored) / len(scored) if scored else None,
        ci_low=ci.low if ci else None, ci_high=ci.high if ci else None,
        parse_failures=sum(r.outcome == "parse_failure" for r in records),
        errors=sum(r.outcome == "error" for r in records),
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
    executor: QuestionExecutor | None = None,
) -> RunSummary:
    """Answer every question without a record yet; append a record per answer.

    ``pipeline`` may be a zero-argument factory: it is only called when work remains, so a
    finished run costs no model load. ``max_consecutive_errors`` aborts a run whose pipeline
    keeps failing (a server down) instead of recording an error for every question; resume
    with ``retry_errors=True`` to redo the questions that errored. With an executor that
    answers several questions at once, "in a row" is in order of completion.
    ``executor``: who answers (default: serial, in this process).
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
            make = (lambda: pipeline) if isinstance(pipeline, Pipeline) else pipeline
            answered = (executor or SerialExecutor()).answers(run_id, make, todo)
            streak = 0
            with _progress(len(todo), name, progress) as advance:
                try:
                    for rec in answered:
                        log.append(rec)  # fsync'd before the next record is looked at
                        n_new += 1
                        advance()
                        streak = streak + 1 if rec.outcome == "error" else 0
                        if max_consecutive_errors and streak >= max_consecutive_errors:
                            raise RunAbortedError(
                                f"run {name}: {streak} questions in a row failed (last: {rec.error}); "
                                f"fix the cause and resume with retry_errors / --retry-errors")
                finally:
                    close = getattr(answered, "close", None)
                    if close is not None:  # stop the executor handing out questions
                        close()
    wanted = set(ids)
    records = [r for r in read_records(run_dir / "results.jsonl") if r.qid in wanted]
    summary = summarize(run_id, name, records, len(questions), n_new)
    write_json_atomic(run_dir / SUMMARY, summary.to_dict())
    return summary


@contextmanager
def _progress(total: int, desc: str, enabled: bool) -> Iterator[Callable[[], None]]:
    if not enabled:
        yield lambda: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc[:40], unit="q", leave=False) as bar:
        yield lambda: bar.update(1)
