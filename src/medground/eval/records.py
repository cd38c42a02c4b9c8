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
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Literal, get_args, get_origin, get_type_hints

from medground.drug_schema import consult_detail
from medground.schema import Answer, ChoiceDetail, FreeTextDetail, Outcome, Question, Vote

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
    """What a run remembers about one question (one line of results.jsonl).

    ``correct`` is None for free-text questions (scored later, e.g. by a judge).
    ``votes`` (optional): LLM-AMT style per-passage votes in rank order, for the accuracy-vs-top-k curve.
    ``extra``: keys of a stored line that this version does not know (a line written by another
    version); kept, and written back at the top level, so re-writing a record loses nothing.
    """

    qid: str
    dataset: str
    gold: str | None
    choice: str | None
    correct: bool | None
    outcome: Outcome
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
    votes: list[Vote] | None = None
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
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: JSON-ready, votes as objects, ``extra``'s keys at the top level."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        if self.votes is not None:
            d["votes"] = [v.to_dict() for v in self.votes]
        clash = sorted(set(d) & set(self.extra))
        if clash:
            raise ValueError(f"record {self.qid}: extra key {clash[0]!r} is a field of RunRecord")
        return {**d, **self.extra}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any, where: str = "record") -> RunRecord:
        """A stored record, checked field by field; ``where`` ("FILE: line N") starts every error.
        A missing field with a default takes it; an unknown key goes to ``extra``."""
        if not isinstance(data, dict):
            raise CorruptRecordsError(f"{where}: expected a JSON run record object, got {type(data).__name__}")
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in _CHECKS:
                known[key] = _checked(key, value, where)
            else:
                extra[key] = value
        missing = [name for name in _REQUIRED if name not in known]
        if missing:
            raise CorruptRecordsError(f"{where}: field {missing[0]!r} is missing")
        return cls(**known, extra=extra)


def _check_of(hint: Any) -> tuple[tuple[type, ...], tuple[Any, ...], bool]:
    """(JSON types, allowed values or (), None allowed) of a RunRecord field's annotation."""
    args = get_args(hint) if isinstance(hint, UnionType) else (hint,)
    (base,) = [a for a in args if a is not NoneType]
    origin = get_origin(base) or base
    if origin is Literal:
        return (str,), get_args(base), NoneType in args
    return {float: (int, float), list: (list,), dict: (dict,)}.get(origin, (origin,)), (), NoneType in args


_HINTS = get_type_hints(RunRecord)
_CHECKS = {f.name: _check_of(_HINTS[f.name]) for f in fields(RunRecord) if f.name != "extra"}
_REQUIRED = [f.name for f in fields(RunRecord) if f.default is MISSING and f.default_factory is MISSING]
_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
               dict: "an object"}


def _checked(name: str, value: Any, where: str) -> Any:
    types, allowed, nullable = _CHECKS[name]
    if value is None and nullable:
        return None
    # bool is an int to Python, never to a record
    ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
    if not ok or (allowed and value not in allowed):
        want = f"one of {list(allowed)}" if allowed else _JSON_NAMES[types[-1]]  # (int, float): a number
        raise CorruptRecordsError(f"{where}: field {name!r}: expected {want}{' or null' if nullable else ''}, "
                                  f"got {json.dumps(value, ensure_ascii=False, default=str)[:80]}")
    if name == "votes":
        return [_vote(v, f"{where}: field 'votes', vote {i}") for i, v in enumerate(value)]
    return float(value) if float in types else value


def _vote(value: Any, where: str) -> Vote:
    if not isinstance(value, dict):
        raise CorruptRecordsError(f"{where}: expected an object, got {json.dumps(value, default=str)[:80]}")
    try:
        return Vote.from_dict(value)
    except ValueError as exc:
        raise CorruptRecordsError(f"{where}: {exc}") from None


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
    read = answer.detail if isinstance(answer.detail, ChoiceDetail) else ChoiceDetail()
    said = answer.detail if isinstance(answer.detail, FreeTextDetail) else FreeTextDetail()
    consult = consult_detail(answer.detail)  # the drug consultation's support pass gates on entries
    support = consult.support_check.score if consult and consult.support_check else said.support
    return RunRecord(
        qid=question.qid, dataset=question.dataset, gold=question.answer, choice=choice, correct=correct,
        outcome=outcome, option_scores={k: float(v) for k, v in answer.option_scores.items()},
        seconds=round(seconds, 6), n_citations=len(answer.citations), queries=[q.text for q in answer.queries],
        tokens=dict(answer.tokens), error=error, text=answer.text,
        citation_ids=[c.chunk_id for c in answer.citations], citation_numbers=[c.number for c in answer.citations],
        timings=dict(answer.timings), votes=list(read.votes) if read.votes is not None else None,
        letter_logprobs=read.letter_logprobs, options_in_evidence=read.options_in_evidence,
        score_parts=read.score_parts, withheld=said.withheld, support=support,
    )


def error_record(question: Question, exc: BaseException, seconds: float) -> RunRecord:
    return RunRecord(qid=question.qid, dataset=question.dataset, gold=question.answer, choice=None,
                     correct=False if question.is_multiple_choice else None, outcome="error",
                     seconds=round(seconds, 6), error=f"{type(exc).__name__}: {exc}"[:2000])


def read_records(path: str | Path, *, latest: bool = True) -> list[RunRecord]:
    """Complete records of a results file. A torn last line is ignored; a bad line elsewhere
    raises with its line number (and the field, when one is wrong). ``latest``: one record per
    qid (the last one written)."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # bytes after the last newline are a torn write
    records: list[RunRecord] = []
    for lineno, line in enumerate(data[:end].split(b"\n")[:-1], 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise CorruptRecordsError(f"{path}: line {lineno}: expected a JSON run record ({exc})") from None
        records.append(RunRecord.from_dict(obj, f"{path}: line {lineno}"))
    if not latest:
        return records
    by_qid: dict[str, RunRecord] = {}
    for rec in records:
        by_qid.pop(rec.qid, None)  # a retried qid moves to where its latest record is
        by_qid[rec.qid] = rec
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
        self.records: list[RunRecord] = []

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
        return {r.qid for r in self.records if not (retry_errors and r.outcome == "error")}

    def append(self, record: RunRecord) -> None:
        if self._fh is None:
            raise RuntimeError("RecordLog is not open; use it as a context manager")
        line = record.to_json().encode("utf-8") + b"\n"
        self._fh.write(line)  # "ab" mode: always at the end, one write per record
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records.append(record)

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


def read_run(run_dir: str | Path) -> tuple[dict[str, Any], list[RunRecord]]:
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


def newest_runs(*roots: Path) -> tuple[dict[str, dict[str, list[RunRecord]]], dict[tuple[str, str], Path]]:
    """dataset → config → records (sorted by qid) of a sweep's runs under ``roots`` (run names
    "<dataset>/llm=…,config=<config>").

    Roots are read in order, each oldest first, so a later root (the local runs after the frozen
    copies) and, within a root, a newer run (a changed config is a new run id under the same
    label) supersedes. The same run id in two roots is one run: its records are merged by qid,
    the later root's record winning (that is how a frozen partial run is resumed). Also returns
    (dataset, config) → the run directory read last (the one whose config.json to copy)."""
    import logging

    runs: dict[str, dict[str, list[RunRecord]]] = {}
    run_of: dict[tuple[str, str], str] = {}
    sources: dict[tuple[str, str], Path] = {}
    for root in map(Path, roots):
        if not root.is_dir():
            continue
        dirs = sorted((p for p in root.iterdir() if (p / RESULTS).exists()),
                      key=lambda p: (p / CONFIG).stat().st_mtime if (p / CONFIG).exists() else 0.0)
        for d in dirs:
            meta, records = read_run(d)
            name = meta.get("name", "")
            if "config=" not in name or not records:
                continue
            dataset, config = name.split("/llm=")[0], name.split("config=")[-1]
            run_id = meta.get("run_id", d.name)
            old = run_of.get((dataset, config))
            if old == run_id:
                records = list({r.qid: r for r in runs[dataset][config] + records}.values())
            elif old is not None:
                logging.getLogger(__name__).warning("%s/%s: run %s supersedes run %s of the same label",
                                                    dataset, config, run_id, old)
            run_of[(dataset, config)] = run_id
            runs.setdefault(dataset, {})[config] = sorted(records, key=lambda r: r.qid)
            sources[(dataset, config)] = d
    return runs, sources
