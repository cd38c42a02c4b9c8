"""The rewording test bed (issue 28): the textbook questions in their original wording, reworded
by method, from new chapters, and written apart; multiple-choice and free-text forms. How each set
was made: benchmarks/data/textbook_testbed.md. The benchmark scripts (benchmarks/rewording.py,
benchmarks/evidence_retention.py) load it from their data folder through these functions.

Sets:
  original   the answerable set (answerable_textbooks.jsonl)
  reworded   each item reworded (reworded_textbooks.jsonl: vignette, lay, brand), an opposite-polarity
             twin of the right option added as a fifth option, and the options reordered (both derived
             here, seeded by the item)
  new        items from chapters the original set never uses (newchapter_textbooks.jsonl)
  fresh      items in a writer's own words, all test (fresh_textbooks.jsonl)
  devfresh   items written the same way from other modules, all development (devfresh_textbooks.jsonl)
A base item and all its rewordings share one split (reading/splits.textbook_testbed_split).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

LETTERS = "ABCDEFGH"
ORIGINAL, REWORDED, NEW = "answerable_textbooks.jsonl", "reworded_textbooks.jsonl", "newchapter_textbooks.jsonl"
FRESH = "fresh_textbooks.jsonl"  # session 28: all held out, loaded with the test split
FRESH_FREE = "fresh_free_textbooks.jsonl"  # their free-text forms (session 28, all test)
DEV_FRESH = "devfresh_textbooks.jsonl"  # session 31: 48 items written the fresh way, all development
OWN_DEV_FREE = "owndev_free_textbooks.jsonl"  # the same style, written for development (all dev)
NEARMISS = "nearmiss_textbooks.jsonl"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _relabel(texts: list[str], gold_text: str) -> tuple[dict[str, str], str]:
    options = {LETTERS[i]: t for i, t in enumerate(texts)}
    return options, next(k for k, v in options.items() if v == gold_text)


def reordered(item: dict) -> tuple[dict[str, str], str]:
    """The option texts shuffled (seeded by the item) so the right one moves to another letter."""
    texts, gold = list(item["options"].values()), item["options"][item["answer"]]
    rng = random.Random(f"reorder:{item['qid']}")
    while True:
        rng.shuffle(texts)
        options, answer = _relabel(texts, gold)
        if answer != item["answer"]:
            return options, answer


def with_twin(item: dict, twin: str) -> tuple[dict[str, str], str]:
    """The right option's opposite-polarity twin inserted at a seeded position (five options)."""
    texts, gold = list(item["options"].values()), item["options"][item["answer"]]
    texts.insert(random.Random(f"polarity:{item['qid']}").randrange(len(texts) + 1), twin)
    return _relabel(texts, gold)


def load_testbed(data: Path, split: str | None) -> list[tuple[object, dict]]:
    """(Question, info) for every item of the split: info has base, method ("original" for the
    original wording), set (original | reworded | new) and, for new items, the evidence."""
    from medground.reading.splits import textbook_testbed_split
    from medground.schema import Question

    def keep(base: str) -> bool:
        return split is None or textbook_testbed_split(base) == split

    def question(qid: str, text: str, options: dict, answer: str) -> Question:
        return Question(qid=qid, dataset="textbook-testbed", question=text, options=options, answer=answer)

    out: list[tuple[object, dict]] = []
    originals = {d["qid"]: d for d in _jsonl(data / ORIGINAL)}
    for qid, d in originals.items():
        if keep(qid):
            out.append((question(qid, d["question"], d["options"], d["answer"]),
                        {"base": qid, "method": "original", "set": "original", "evidence": d["evidence"]}))
            options, answer = reordered(d)
            out.append((question(f"{qid}~reorder", d["question"], options, answer),
                        {"base": qid, "method": "reorder", "set": "reworded", "evidence": d["evidence"]}))
    for r in _jsonl(data / REWORDED):
        base = r["base_qid"]
        if not keep(base):
            continue
        d = originals[base]
        if r["method"] == "polarity":
            if not r.get("polarity_twin"):
                continue
            options, answer = with_twin(d, r["polarity_twin"])
            text = d["question"]
        else:
            text, options, answer = r["question"], r["options"], r["answer"]
        out.append((question(f"{base}~{r['method']}", text, options, answer),
                    {"base": base, "method": r["method"], "set": "reworded", "evidence": d["evidence"]}))
    for d in _jsonl(data / NEW):
        if keep(d["qid"]):
            out.append((question(d["qid"], d["question"], d["options"], d["answer"]),
                        {"base": d["qid"], "method": "original", "set": "new", "evidence": d["evidence"]}))
    if split in (None, "test") and (data / FRESH).exists():
        for d in _jsonl(data / FRESH):
            out.append((question(d["id"], d["question"], d["options"], d["answer"]),
                        {"base": d["id"], "method": d["style"], "set": "fresh", "evidence": d["evidence"],
                         "trap": d["trap"]}))
    if split in (None, "dev") and (data / DEV_FRESH).exists():
        for d in _jsonl(data / DEV_FRESH):
            out.append((question(d["id"], d["question"], d["options"], d["answer"]),
                        {"base": d["id"], "method": d["style"], "set": "devfresh", "evidence": d["evidence"],
                         "trap": d["trap"]}))
    return out


def load_free(data: Path, split: str | None) -> list[tuple[object, dict]]:
    """Free-text questions: each new-chapter item's free form, and the near-miss pairs (an
    answerable question about X, and the same question about a near entity Y the books do not
    answer for). info: set (new | pair_answerable | pair_nearmiss), accept (strings that state the
    gold answer; none for a near miss, whose right reply declines)."""
    from medground.reading.splits import textbook_testbed_split
    from medground.schema import Question

    out: list[tuple[object, dict]] = []
    for d in _jsonl(data / NEW):
        if split is None or textbook_testbed_split(d["qid"]) == split:
            out.append((Question(qid=f"{d['qid']}~free", dataset="textbook-testbed", question=d["free_question"]),
                        {"base": d["qid"], "set": "new", "accept": d["accept"], "evidence": d["evidence"]}))
    if (data / NEARMISS).exists():
        for d in _jsonl(data / NEARMISS):
            if split is None or textbook_testbed_split(d["pair"]) == split:
                a, y = d["answerable"], d["near_miss"]
                out.append((Question(qid=f"{d['pair']}~x", dataset="textbook-testbed", question=a["question"]),
                            {"base": d["pair"], "set": "pair_answerable", "accept": a["accept"]}))
                out.append((Question(qid=f"{d['pair']}~y", dataset="textbook-testbed", question=y["question"]),
                            {"base": d["pair"], "set": "pair_nearmiss", "accept": []}))
    # the session-28 sets written apart: one split each, no halves (owndev to build on, fresh held out)
    for path, name, held in ((data / OWN_DEV_FREE, "owndev", "dev"), (data / FRESH_FREE, "fresh", "test"),
                             (data / DEV_FRESH, "devfresh", "dev")):
        if split in (None, held) and path.exists():
            for d in _jsonl(path):
                out.append((Question(qid=f"{d['id']}~free", dataset="textbook-testbed", question=d["free_question"]),
                            {"base": d["id"], "set": name, "accept": d["accept"], "reject": d.get("reject", []),
                             "evidence": d["evidence"]}))
    return out
