"""Sources → readers → chunker → ChunkStore, incrementally.

Per unit (what a reader's ``discover`` returns: a book directory, a JSON file): hash its files;
if the manifest holds the same hash and chunker settings the unit is left alone ("unchanged");
otherwise it is read and chunked in full and then swapped in with one transaction, so a bad
input never leaves a half-replaced unit and never removes what was stored before.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from medground.corpus.base import BadInputError, BadRecord, ErrorPolicy
from medground.corpus.chunking import CHUNKER_VERSION, ChunkerSettings, make_chunker
from medground.corpus.sources import tree_sha256
from medground.store.chunks import ChunkStore, ManifestEntry
from medground.registry import create
from medground.schema import Chunk, Document

SourceSetName = Literal["textbooks", "all"]

OPENSTAX_BOOKS = (
    "anatomy-physiology-2e",
    "microbiology",
    "psychology-2e",
    "pharmacology-for-nurses",
    "nutrition-for-nurses",
    "population-health-for-nurses",
)


class SourceSpec(BaseModel):
    """One source to ingest: a reader name and a path it understands (file or directory)."""

    model_config = ConfigDict(extra="forbid")

    reader: str
    path: str
    corpus: str | None = (
        None  # overrides the reader's corpus name on documents and chunks
    )


def source_set(name: str, data: Path) -> list[SourceSpec]:
    """The named default source sets, relative to the data root."""
    textbooks = [
        SourceSpec(reader="openstax", path=str(data / "corpora" / "openstax" / b))
        for b in OPENSTAX_BOOKS
    ]
    if name == "textbooks":
        return textbooks
    if name == "all":
        return textbooks + [
            SourceSpec(reader="medquad", path=str(data / "corpora" / "medquad")),
            SourceSpec(
                reader="medlineplus", path=str(data / "corpora" / "medlineplus-topics")
            ),
            SourceSpec(
                reader="fda_labels", path=str(data / "drugs" / "fda-labels-tac2017")
            ),
            SourceSpec(
                reader="pubmedqa",
                path=str(data / "benchmarks" / "pubmedqa" / "ori_pqal.json"),
            ),
        ]
    raise ValueError(
        f"unknown source set {name!r}; expected 'textbooks', 'all' or READER:PATH"
    )


def parse_sources(args: Iterable[str], data: Path) -> list[SourceSpec]:
    """CLI form: "textbooks", "all", or "READER:PATH" (a relative PATH is under the data root
    when it exists there, else relative to the working directory)."""
    specs: list[SourceSpec] = []
    for arg in args:
        if arg in ("textbooks", "all"):
            specs.extend(source_set(arg, data))
            continue
        reader, sep, path = arg.partition(":")
        if not sep or not reader or not path:
            raise ValueError(
                f"source {arg!r}: expected 'textbooks', 'all' or READER:PATH"
            )
        p = Path(path).expanduser()
        if not p.is_absolute() and (data / p).exists():
            p = data / p
        specs.append(SourceSpec(reader=reader, path=str(p)))
    return specs


def hash_unit(path: Path) -> tuple[str, int]:
    """sha256 over a file, or over a directory's sorted relative paths and file hashes."""
    return tree_sha256(path)


def chunker_signature(settings: ChunkerSettings, tokenizer_fingerprint: str) -> str:
    """What decides the chunks besides the input: settings, tokenizer file, chunker version."""
    return json.dumps(
        {
            "settings": settings.model_dump(),
            "tokenizer_sha256": tokenizer_fingerprint,
            "version": CHUNKER_VERSION,
        },
        sort_keys=True,
    )


UnitStatus = Literal["ingested", "unchanged", "failed", "skipped"]


@dataclass(slots=True)
class UnitResult:
    unit: str
    reader: str
    corpus: str
    status: UnitStatus
    documents: int = 0
    chunks: int = 0
    seconds: float = 0.0
    duplicates: int = 0  # repeated doc/chunk ids inside the unit, kept once
    error: str = ""


@dataclass
class IngestReport:
    units: list[UnitResult] = field(default_factory=list)
    bad_records: list[BadRecord] = field(default_factory=list)
    seconds: float = 0.0

    def _n(self, status: str) -> int:
        return sum(u.status == status for u in self.units)

    @property
    def ingested(self) -> int:
        return self._n("ingested")

    @property
    def unchanged(self) -> int:
        return self._n("unchanged")

    @property
    def failed(self) -> int:
        return self._n("failed")

    @property
    def skipped(self) -> int:
        return self._n("skipped")

    @property
    def chunks(self) -> int:
        return sum(u.chunks for u in self.units if u.status == "ingested")

    def to_dict(self) -> dict[str, Any]:
        return {
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "skipped": self.skipped,
            "chunks_written": self.chunks,
            "seconds": round(self.seconds, 3),
            "units": [asdict(u) for u in self.units],
            "bad_records": [asdict(b) for b in self.bad_records],
        }


def ingest(
    store: ChunkStore,
    sources: list[SourceSpec],
    chunker_settings: ChunkerSettings | None = None,
    skip_bad: bool = False,
    progress: bool = True,
) -> IngestReport:
    """Bring the store up to date with ``sources``. Without ``skip_bad`` the first bad record
    raises BadInputError (naming file and place) and the unit being read is left as it was;
    with it, bad records and unreadable units are listed in the report and the rest goes in."""
    settings = chunker_settings or ChunkerSettings()
    chunker = make_chunker(settings)
    signature = chunker_signature(settings, chunker.counter.fingerprint)  # type: ignore[attr-defined]
    manifest = {m.unit: m for m in store.manifest()}
    report = IngestReport()
    t0 = time.perf_counter()

    plan: list[tuple[SourceSpec, Any, Path]] = []
    planned: set[str] = set()
    for spec in sources:
        reader = create("reader", spec.reader)
        root = Path(spec.path)
        if not root.exists():
            err = BadInputError(
                root,
                "path",
                f"a file or directory for reader {spec.reader!r}",
                "nothing",
            )
            if not skip_bad:
                raise err
            report.bad_records.append(BadRecord(str(root), "path", str(err)))
            continue
        units = reader.discover(root)
        if not units:
            err = BadInputError(
                root, "path", f"input that reader {spec.reader!r} understands", "none"
            )
            if not skip_bad:
                raise err
            report.bad_records.append(BadRecord(str(root), "path", str(err)))
        for u in units:  # a unit named twice ("textbooks" and "all") is ingested once
            if (key := str(Path(u).resolve())) not in planned:
                planned.add(key)
                plan.append((spec, reader, Path(u)))

    with _progress(progress, len(plan)) as advance:
        for spec, reader, unit in plan:
            report.units.append(
                _ingest_unit(
                    store,
                    spec,
                    reader,
                    unit,
                    chunker,
                    signature,
                    manifest,
                    skip_bad,
                    report,
                )
            )
            advance(unit.name)
    report.seconds = time.perf_counter() - t0
    return report


def _ingest_unit(
    store, spec, reader, unit, chunker, signature, manifest, skip_bad, report
) -> UnitResult:
    t = time.perf_counter()
    key = str(unit.resolve())
    sha, n_files = hash_unit(unit)
    corpus = spec.corpus or reader.name
    old = manifest.get(key)
    if (
        old
        and old.sha256 == sha
        and old.chunker == signature
        and old.reader == spec.reader
        and old.corpus == corpus
    ):
        return UnitResult(
            key,
            spec.reader,
            corpus,
            "unchanged",
            old.documents,
            old.chunks,
            time.perf_counter() - t,
        )
    policy = ErrorPolicy(skip=skip_bad)
    try:
        docs = list(reader.read(unit, policy))
    except BadInputError as err:
        if not skip_bad:
            raise
        report.bad_records.append(BadRecord(err.path, err.where, str(err)))
        return UnitResult(
            key,
            spec.reader,
            corpus,
            "failed",
            seconds=time.perf_counter() - t,
            error=str(err),
        )
    report.bad_records.extend(policy.problems)
    if not docs and policy.problems:
        # Every record of the unit was bad and skipped: nothing was ingested, and the manifest
        # is left alone so a fixed file is read next time.
        return UnitResult(key, spec.reader, corpus, "skipped", seconds=time.perf_counter() - t,
                          error=policy.problems[0].message)
    docs, chunks, dupes = _chunk_all(docs, chunker, spec.corpus)
    entry = ManifestEntry(
        unit=key,
        reader=spec.reader,
        corpus=corpus,
        sha256=sha,
        file_count=n_files,
        chunker=signature,
    )
    store.replace_unit(entry, docs, chunks)
    return UnitResult(
        key,
        spec.reader,
        corpus,
        "ingested",
        len(docs),
        len(chunks),
        time.perf_counter() - t,
        dupes,
    )


def _chunk_all(
    docs: list[Document], chunker, corpus: str | None
) -> tuple[list[Document], list[Chunk], int]:
    seen_docs: set[tuple[str, str]] = set()
    seen_chunks: set[str] = set()
    kept_docs: list[Document] = []
    chunks: list[Chunk] = []
    dupes = 0
    for doc in docs:
        if corpus:
            doc.corpus = corpus
        if (doc.corpus, doc.doc_id) in seen_docs:
            dupes += 1
            continue
        seen_docs.add((doc.corpus, doc.doc_id))
        kept_docs.append(doc)
        for c in chunker.chunk(doc):
            if c.chunk_id in seen_chunks:
                dupes += 1
                continue
            seen_chunks.add(c.chunk_id)
            chunks.append(c)
    return kept_docs, chunks, dupes


class _progress:
    """A rich progress bar over units (silent when disabled or not on a terminal in CI)."""

    def __init__(self, enabled: bool, total: int):
        self.enabled = (
            enabled and total > 0 and not os.environ.get("MEDGROUND_NO_PROGRESS")
        )
        self.total = total

    def __enter__(self):
        if not self.enabled:
            return lambda name: None
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._p = Progress(
            TextColumn("ingest {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
        )
        self._p.__enter__()
        task = self._p.add_task("", total=self.total)
        return lambda name: self._p.update(task, advance=1, description=name)

    def __exit__(self, *exc):
        if self.enabled:
            self._p.__exit__(*exc)
