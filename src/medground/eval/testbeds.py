"""The test sets the benchmark scripts share, loaded the same way by each of them.

- the answerable set (``benchmarks/data/answerable_textbooks.jsonl``): textbook questions whose
  answer is one sentence of one chunk; the caller passes the file's path;
- the Medication QA questions the medicine database can answer, and those whose question type
  maps to a database attribute (the consultation benchmarks);
- PubMedQA known-item search: the 1,000 labelled abstracts as chunks, each question's gold its
  own abstract.

Heavy imports (the store, the drug retriever, the datasets) are made inside the functions: a
script that only re-summarises stored results never pays for them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from medground.schema import Chunk, Question

MIN_EXAMPLES = 5  # a question type with fewer labelled questions is not learnable (reported, not trained)


def load_answerable(path: Path, locate: bool = True) -> list[tuple[Question, dict]]:
    """(question, item) pairs of the answerable set at ``path``; ``locate``: each item's ``gold_ids``
    are the chunks of this home's store that hold its evidence sentence (the file's ``chunk_id`` was
    the store's when the set was written; another chunker version or setting names the passage
    differently), falling back to that ``chunk_id`` where no chunk holds the sentence."""
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            out.append((Question(qid=d["qid"], dataset="answerable", question=d["question"], options=d["options"],
                                 answer=d["answer"]), d))
    if locate:
        from medground.eval.coverage import locate_evidence
        from medground.store.settings import open_store

        store = open_store(must_exist=True)
        found = locate_evidence(store.iter_chunks(["openstax"]), [d["evidence"] for _, d in out])
        for _, d in out:
            d["gold_ids"] = found[d["evidence"]] or {d["chunk_id"]}
    return out


def eligible_medication_qa():
    """(DrugStore, DrugRetriever, the Medication QA items the database can answer): the single-turn
    set and the source of the generated multi-turn dialogues (eval/dialogues.py). A question's
    drug is found by exact name only, so an item's gold drug is never a fuzzy guess."""
    from medground.drug_schema import normalize_name
    from medground.eval import dialogues
    from medground.eval.datasets import load_dataset
    from medground.retrieve.drugs import DrugRetriever
    from medground.store.drugs import DrugStore

    store = DrugStore()
    retriever = DrugRetriever(store)

    def exact(name: str) -> str | None:
        hits = retriever.names.get(normalize_name(name).strip(), [])
        return hits[0][0] if hits else None

    return store, retriever, dialogues.eligible(load_dataset("medication-qa"), store.drugs(), store.attributes(), exact)


def labelled_medication_qa(min_examples: int = MIN_EXAMPLES):
    """(items, skipped, rare): ``items`` (question, attribute) for every Medication QA question whose
    type maps to a database attribute (retrieve/drug_intent.MEDICATION_QA_TYPES) with at least
    ``min_examples`` questions; ``skipped`` counts the unmapped types; ``rare`` the left-out
    attributes with their counts."""
    from medground.eval.datasets import load_dataset
    from medground.retrieve.drug_intent import attribute_for

    items, skipped = [], Counter()
    for q in load_dataset("medication-qa"):
        attr = attribute_for(q.metadata["question_type"])
        if attr is None:
            skipped[q.metadata["question_type"]] += 1
        else:
            items.append((q, attr))
    counts = Counter(a for _, a in items)
    rare = {a for a, n in counts.items() if n < min_examples}
    return [(q, a) for q, a in items if a not in rare], skipped, {a.value: counts[a] for a in rare}


def pubmedqa_known_item(root: Path) -> tuple[list[Chunk], list[tuple[str, str]]]:
    """PubMedQA PQA-L as known-item search under the data root: one chunk per abstract paragraph
    (title left empty: a PubMedQA question is often its paper's title, so the chunk does not get
    it), and (PMID, question) pairs whose gold is that PMID's abstract."""
    items = json.loads((Path(root) / "benchmarks/pubmedqa/ori_pqal.json").read_text())
    chunks, questions = [], []
    for pmid, it in items.items():
        questions.append((pmid, it["QUESTION"]))
        for i, (text, label) in enumerate(zip(it["CONTEXTS"], it["LABELS"], strict=True)):
            chunks.append(Chunk(chunk_id=f"{pmid}-{i}", doc_id=pmid, corpus="pubmedqa", source_path="ori_pqal.json",
                                text=text, title="", section_path=(label.title(),)))
    return chunks, questions


def exact_drug(retriever, name: str) -> tuple[str | None, set[str]]:
    """The database drug ``name`` names exactly (generic or brand), and the attribute types it holds.
    A generic name equal to the writer's comes first: the name search reads "hydralazine/isosorbide
    dinitrate" as its component isosorbide dinitrate (session 32: one apart6 item had been scored
    unanswerable so)."""
    from medground.drug_schema import normalize_name

    key = normalize_name(name)
    same = [d.drug_id for d in retriever.drugs.values() if normalize_name(d.generic_name) == key]
    exact = [m.drug_id for m in retriever.find_drugs(name) if m.how.startswith("exact")]
    if not same and not exact:
        return None, set()
    drug = (same or exact)[0]
    return drug, {a.type.value for a in retriever.attributes if a.drug_id == drug}


def medication_qa_items(split: str, store) -> list[dict]:
    """Medication QA questions of one split whose focus drug the database names exactly, as the
    consultation benchmarks read them: the dialogue, the subject, the attribute that answers (None
    when the type maps to none or the drug holds no such entry: unanswerable here)."""
    from medground.eval.datasets import load_dataset
    from medground.reading.consult_typer import NONE, label_of
    from medground.reading.splits import medication_qa_split
    from medground.retrieve.drugs import DrugRetriever

    retriever = DrugRetriever(store)
    out = []
    for q in load_dataset("medication-qa"):
        if medication_qa_split(q.qid) != split:
            continue
        lab = label_of(q.metadata["question_type"])
        if lab is None:
            continue
        drug, held = exact_drug(retriever, q.metadata["focus_drug"])
        if drug is None:
            continue
        # A type the drug has no entry of is as unanswerable here as a "none" question.
        unanswerable = lab == NONE or lab not in held
        out.append({"id": f"mqa-{q.qid}", "dialogue": q.question, "subject": drug,
                    "attribute": None if unanswerable else lab, "terms": [], "kind": None,
                    "unanswerable": unanswerable, "source_qid": q.qid})
    return out
