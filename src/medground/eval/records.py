"""Per-question run records: one JSON line each, appended and fsynced, safe to resume.

Layout of a run directory (RUNS_DIR/<run_id>/):
    config.json     what was run (run_id, name, axes, config, dataset) - written once
    results.jsonl   one record per question, appended as soon as it is answered
    summary.json    totals, rewritten at the end of each session (derived, may be stale)

Crash safety: each record is one ``write`` of a full line followed by ``flush`` + ``os.fsync``,
so a kill loses at most the record being written. On open, a torn last line (bytes after the
final newline) is cut off; complete lines are kept. Reading is "last record per qid wins",
which only matters when errors are retried (the retry is appended, the old line stays).
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medground.schema import Answer, Question

RESULTS = "results.jsonl"
CONFIG = "config.json"
SUMMARY = "summary.json"


class CorruptRecordsError(ValueError):
    pass


class RunLockedError(RuntimeError):
    pass


def lock_for_writing(fh, path: str | Path, error: type[RuntimeError] | None = None, hint: str = "") -> None:
    """An exclusive lock on the open file ``fh`` (held until it is closed), or ``error`` (default
    RunLockedError) naming ``path``: two appenders to one resumable file would do the work twice."""
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise (error or RunLockedError)(f"{path} is being written by another process{hint}") from None


@dataclass(slots=True)
class RunRecord:
    """What a run remembers about one question.

    ``correct`` is None for free-text questions (scored later, e.g. by a judge).
    ``votes`` (optional): LLM-AMT style per-passage votes in rank order,
    ``[{"choice": "B", "confidence": 0.8}, ...]``, for the accuracy-vs-top-k curve.
    """

    qid: str
    dataset: str
    gold: str | None
    choice: str | None
    correct: bool | None
    outcome: str  # answered | parse_failure | insufficient_evidence | error
    option_scores: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    n_citations: int = 0
    queries: list[str] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    text: str = ""
    citation_ids: list[str] = field(default_factory=list)
    # the [n] each cited passage had in the answer's text (parallel to citation_ids)
    citation_numbers: list[int] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    votes: list[dict[str, Any]] | None = None
    # Raw per-letter log-probabilities of a letter-scored answer (before any calibration), so a
    # report can calibrate after the fact without re-running the model.
    letter_logprobs: dict[str, float] | None = None
    # Multiple choice read per option: for each letter, the citations whose text names the option
    # (reading/options.py), so a report can measure how often the right option reached the reader.
    options_in_evidence: dict[str, list[int]] | None = None
    # A read that combined several distributions (reading.choice.read_grounded_choice): each one.
    score_parts: dict[str, dict[str, float]] | None = None
    # A free-text answer that a check withheld (reading.freetext.free_text_answer's entity check):
    # what would have been said, so a report can score the reply with and without the check.
    withheld: str | None = None
    # A free-text answer's support pass, 1 − P(no passage answers): a report can refit the
    # abstention threshold from a run that never abstained, without re-running the model.
    support: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))


def record_from_answer(question: Question, answer: Answer, seconds: float) -> RunRecord:
    """Score an Answer against its Question. A parse failure is wrong and never gets a letter."""
    choice, outcome, error = answer.choice, answer.outcome, None
    if question.is_multiple_choice:
        if outcome == "answered" and choice not in question.options:
            # An out-of-range letter is a parse failure, not an answer.
            error = f"choice {choice!r} is not one of the options {sorted(question.options)}"
            outcome, choice = "parse_failure", None
        if outcome != "answered":
            choice = None
        correct: bool | None = outcome == "answered" and choice == question.answer
    else:
        correct = None
    votes = answer.metadata.get("votes")
    return RunRecord(
        qid=question.qid, dataset=question.dataset, gold=question.answer, choice=choice, correct=correct,
        outcome=outcome, option_scores={k: float(v) for k, v in answer.option_scores.items()},
        seconds=round(seconds, 6), n_citations=len(answer.citations), queries=[q.text for q in answer.queries],
        tokens=dict(answer.tokens), error=error, text=answer.text,
        citation_ids=[c.chunk_id for c in answer.citations], citation_numbers=[c.number for c in answer.citations],
        timings=dict(answer.timings),
        votes=list(votes) if votes is not None else None,
        letter_logprobs=answer.metadata.get("letter_logprobs"),
        options_in_evidence=answer.metadata.get("options_in_evidence"),
        score_parts=answer.metadata.get("score_parts"),
        withheld=answer.metadata.get("withheld"),
        support=answer.metadata.get("support"),
    )


def error_record(question: Question, exc: BaseException, seconds: float) -> RunRecord:
    return RunRecord(qid=question.qid, dataset=question.dataset, gold=question.answer, choice=None,
                     correct=False if question.is_multiple_choice else None, outcome="error",
                     seconds=round(seconds, 6), error=f"{type(exc).__name__}: {exc}"[:2000])


def read_records(path: str | Path, *, latest: bool = True) -> list[dict[str, Any]]:
    """Complete records of a results file. A torn last line is ignored; a bad line elsewhere
    raises with its line number. ``latest``: one record per qid (the last one written)."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # bytes after the last newline are a torn write
    records: list[dict[str, Any]] = []
    for lineno, line in enumerate(data[:end].split(b"\n")[:-1], 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict) or "qid" not in rec:
                raise ValueError("not a record object with a qid")
        except ValueError as exc:
            raise CorruptRecordsError(f"{path}: line {lineno}: expected a JSON run record ({exc})") from None
        records.append(rec)
    if not latest:
        return records
    by_qid: dict[str, dict[str, Any]] = {}
    for rec in records:
        by_qid.pop(rec["qid"], None)  # a retried qid moves to where its latest record is
        by_qid[rec["qid"]] = rec
    return list(by_qid.values())


class RecordLog:
    """Append-only results file of one run, held under an exclusive lock while open.

    >>> with RecordLog(run_dir) as log:
    ...     done = log.done_qids()
    ...     log.append(record)
    """

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / RESULTS
        self._fh = None
        self.records: list[dict[str, Any]] = []

    def __enter__(self) -> RecordLog:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "ab+")
        try:
            lock_for_writing(fh, self.path)
        except RunLockedError:
            fh.close()
            raise
        self._fh = fh
        self._cut_torn_tail()
        self.records = read_records(self.path)
        return self

    def _cut_torn_tail(self) -> None:
        fh = self._fh
        fh.seek(0)
        data = fh.read()
        end = data.rfind(b"\n") + 1
        if end != len(data):
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())

    def done_qids(self, retry_errors: bool = False) -> set[str]:
        return {r["qid"] for r in self.records if not (retry_errors and r.get("outcome") == "error")}

    def append(self, record: RunRecord) -> None:
        if self._fh is None:
            raise RuntimeError("RecordLog is not open; use it as a context manager")
        line = record.to_json().encode("utf-8") + b"\n"
        self._fh.write(line)  # "ab" mode: always at the end, one write per record
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records.append(asdict(record))

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """Write JSON through a temp file + rename, so a reader never sees half a file."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_run(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(config.json, latest records) of a run directory."""
    run_dir = Path(run_dir)
    cfg_path = run_dir / CONFIG
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        config = {"run_id": run_dir.name, "name": run_dir.name}
    except json.JSONDecodeError as exc:
        raise CorruptRecordsError(f"{cfg_path}: line {exc.lineno}: expected JSON ({exc.msg})") from None
    return config, read_records(run_dir / RESULTS)
