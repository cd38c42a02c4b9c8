"""Benchmark sets by name, and deterministic subsets.

    load_dataset("mirage/medqa")                      # from the shared data
    load_dataset("medqa-jsonl", path="my/test.jsonl")  # a public format the user brings
    subset(questions, 200, seed=0, stratify_by="subject")
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from medground.corpus.base import ErrorPolicy
from medground.eval import loaders
from medground.paths import data_root
from medground.schema import Question

Parser = Callable[..., list[Question]]  # (path, dataset, policy, [split]) -> questions


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    name: str
    parser: Parser
    relpath: str | None  # under the data root; None: a format the user must give a path for
    description: str
    splits: tuple[str, ...] = ("test",)
    kind: str = "multiple-choice"  # or "free-text"
    takes_split: bool = False  # the parser chooses the split itself (PubMedQA's test ids)


def _mirage(sub: str) -> DatasetInfo:
    return DatasetInfo(f"mirage/{sub}", partial(loaders.load_mirage, sub=sub), "benchmarks/mirage/benchmark.json",
                       f"MIRAGE {sub} (benchmark.json)")


def _medagents(sub: str, desc: str, **kw) -> DatasetInfo:
    return DatasetInfo(f"medagents/{sub}", partial(loaders.load_medqa_jsonl, **kw),
                       f"benchmarks/medagents/{sub}/test.jsonl", desc)


_TABLE: list[DatasetInfo] = [
    *(_mirage(s) for s in ("medqa", "medmcqa", "pubmedqa", "bioasq", "mmlu")),
    _medagents("medqa", "MedQA-US 4 options, meta_info step1 / step2&3"),
    _medagents("medqa_5options", "MedQA-US 5 options A-E"),
    _medagents("mmlu", "MMLU medical subjects, metadata.subject"),
    _medagents("pubmedqa", "PubMedQA test, abstract split into context", split_context=True),
    _medagents("medmcqa", "MedMCQA dev subset (2,816)"),
    DatasetInfo("pubmedqa", loaders.load_pubmedqa_pqal, "benchmarks/pubmedqa/ori_pqal.json",
                "PubMedQA PQA-L with abstracts as context; yes/no/maybe = A/B/C", ("test", "train", "all"),
                takes_split=True),
    DatasetInfo("cnmleqa", loaders.load_cnmleqa, "benchmarks/cnmleqa/CNMLEQA-3k.json",
                "Chinese licensing exam, 5 options (stand-in for MedQA-MCMLE)"),
    DatasetInfo("medicineqa-zh", loaders.load_medicineqa, "benchmarks/medicineqa-zh/MedicineQA_RAG.jsonl",
                "Chinese medication consultation; gold drug documents in metadata", kind="free-text"),
    DatasetInfo("medication-qa", loaders.load_medication_qa,
                "benchmarks/medication-qa/MedInfo2019-QA-Medications.xlsx",
                "MedInfo2019 consumer medication questions with expert answers", kind="free-text"),
    # Public formats users bring (path required).
    DatasetInfo("medqa-jsonl", loaders.load_medqa_jsonl, None,
                "MedQA-US JSONL {question, options{A..}, answer_idx} with 4 or 5 options"),
    DatasetInfo("medmcqa-json", loaders.load_medmcqa, None, "MedMCQA {question, opa..opd, cop 1..4}"),
    DatasetInfo("medmcqa-hf", partial(loaders.load_medmcqa, cop_base=0), None,
                "MedMCQA Hugging Face export (cop 0..3)"),
]

DATASETS: dict[str, DatasetInfo] = {d.name: d for d in _TABLE}


class UnknownDatasetError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def dataset_info(name: str) -> DatasetInfo:
    try:
        return DATASETS[name]
    except KeyError:
        raise UnknownDatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}") from None


def load_dataset(
    name: str,
    path: str | Path | None = None,
    split: str | None = None,
    *,
    data_dir: str | Path | None = None,
    policy: ErrorPolicy | None = None,
) -> list[Question]:
    """Questions of a known set (from the data root, or ``path`` to override the file)."""
    info = dataset_info(name)
    split = split or info.splits[0]
    if split not in info.splits:
        raise ValueError(f"dataset {name!r} has splits {list(info.splits)}, not {split!r}")
    if path is None:
        if info.relpath is None:
            raise ValueError(f"dataset format {name!r} needs a path to the user's file")
        path = data_root(data_dir) / info.relpath
    policy = policy or ErrorPolicy()
    dataset = name.split("/")[-1] if "/" in name else name
    if info.takes_split:
        return info.parser(Path(path), dataset, split, policy)
    return info.parser(Path(path), dataset, policy)


def _rank_key(seed: int | str, qid: str) -> str:
    # sha256, not hash(): identical across runs, machines and Python versions.
    return hashlib.sha256(f"{seed}\x1f{qid}".encode()).hexdigest()


def subset(
    questions: list[Question],
    n: int | None,
    seed: int | str = 0,
    stratify_by: str | Callable[[Question], object] | None = None,
) -> list[Question]:
    """A deterministic sample of ``n`` questions, kept in their original order.

    Questions are ranked by sha256(seed, qid); the first ``n`` are kept. With ``stratify_by``
    (a metadata key, ``"answer"``, or a function) each stratum gets its proportional share
    (largest remainder), so the sample keeps the set's mix. Adding questions to the set does
    not change which of the old ones a given seed ranks first.
    """
    if n is None or n >= len(questions):
        return list(questions)
    if n < 0:
        raise ValueError(f"subset size must be >= 0, got {n}")
    if stratify_by is None:
        chosen = sorted(questions, key=lambda q: _rank_key(seed, q.qid))[:n]
    else:
        key = stratify_by if callable(stratify_by) else _attr_getter(stratify_by)
        strata: dict[str, list[Question]] = defaultdict(list)
        for q in questions:
            strata[str(key(q))].append(q)
        total = len(questions)
        quotas = {s: n * len(qs) / total for s, qs in strata.items()}
        alloc = {s: int(v) for s, v in quotas.items()}
        # Largest remainder; ties broken by stratum name so the result does not depend on order.
        left = n - sum(alloc.values())
        for s in sorted(quotas, key=lambda s: (-(quotas[s] - alloc[s]), s))[:left]:
            alloc[s] += 1
        chosen = []
        for s, qs in strata.items():
            chosen += sorted(qs, key=lambda q: _rank_key(seed, q.qid))[: alloc[s]]
    keep = {id(q) for q in chosen}
    return [q for q in questions if id(q) in keep]


def _attr_getter(field: str) -> Callable[[Question], object]:
    def get(q: Question) -> object:
        if field == "answer":
            return q.answer
        return q.metadata.get(field)

    return get
