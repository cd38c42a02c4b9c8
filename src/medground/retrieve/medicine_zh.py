"""A Chinese medicine database from MedicineQA's embedded drug documents, and search over it.

MedicineQA (RagPULSE's benchmark) embeds its gold evidence in each prompt as
``[n]药品名\\n属性:文本``. ``catalog_from_medicineqa`` collects those documents, deduplicated, into
the same ``DrugCatalog`` the English database uses (drug = the product name, attribute types
mapped from the Chinese attribute names by ``ATTRIBUTE_ZH``).

``ZhMedicineSearch`` ranks (drug, attribute) records for a consultation:
- ``bm25``: BM25 over Chinese-aware tokens (every CJK character and character bigram, plus Latin
  words and numbers: no dictionary, robust to drug names a segmenter has never seen);
- ``entity``: entity first, as the English retriever does. Drug names found in the text (longest
  first; also without the dosage-form suffix, "异烟肼片" → "异烟肼") rank that drug's records
  first, ordered by the attribute the question asks for (an ``attribute_scores`` callable, e.g.
  the learned typer) and BM25; text naming no drug falls back to BM25.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

from medground.drug_schema import AttributeType, Drug, DrugAttribute, DrugCatalog

A = AttributeType
ATTRIBUTE_ZH: dict[str, AttributeType] = {
    "适应症": A.INDICATIONS, "功能主治": A.INDICATIONS, "不良反应": A.ADVERSE_REACTIONS,
    "用法用量": A.DOSAGE, "禁忌症": A.CONTRAINDICATIONS, "禁忌": A.CONTRAINDICATIONS,
    "药物相互作用": A.INTERACTIONS, "注意事项": A.WARNINGS, "存储方式": A.STORAGE, "贮藏": A.STORAGE,
    "孕妇禁忌": A.SPECIAL_POPULATIONS, "儿童禁忌": A.SPECIAL_POPULATIONS, "老年人禁忌": A.SPECIAL_POPULATIONS,
}
# Dosage forms that end a product name: "阿莫西林胶囊" is amoxicillin, as a capsule.
_FORMS = sorted(["肠溶片", "缓释片", "控释片", "分散片", "咀嚼片", "泡腾片", "口崩片", "片", "软胶囊", "胶囊", "颗粒",
                 "注射液", "注射用", "口服液", "口服溶液", "混悬液", "糖浆", "滴眼液", "滴丸", "丸", "散", "乳膏",
                 "软膏", "凝胶", "喷雾剂", "气雾剂", "贴剂", "栓", "溶液", "合剂", "酊", "膏"], key=len, reverse=True)
_CJK = re.compile(r"[\u4e00-\u9fff]+|[a-z0-9]+(?:\.[0-9]+)?")


def zh_tokens(text: str) -> list[str]:
    """CJK characters and character bigrams; Latin words and numbers whole (lower case)."""
    out: list[str] = []
    for run in _CJK.findall(text.lower()):
        if run[0] < "\u4e00":
            out.append(run)
            continue
        out.extend(run)
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def base_name(name: str) -> str:
    """A product name without its dosage form ("注射用英夫利西单抗" → "英夫利西单抗")."""
    n = name.strip()
    if n.startswith("注射用"):
        n = n[3:]
    for form in _FORMS:
        if n.endswith(form) and len(n) - len(form) >= 2:
            return n[: -len(form)]
    return n


def catalog_from_medicineqa(questions: Sequence) -> DrugCatalog:
    """Every distinct embedded document of the MedicineQA questions, as a DrugCatalog."""
    drugs: dict[str, Drug] = {}
    attrs: dict[tuple[str, str, str], DrugAttribute] = {}
    problems: list[str] = []
    for q in questions:
        for d in q.metadata.get("gold_documents", []):
            kind = ATTRIBUTE_ZH.get(d["attribute"])
            if kind is None:
                problems.append(f"{q.qid}: unknown attribute {d['attribute']!r} of {d['drug']!r}")
                continue
            drug_id = d["drug"]
            drugs.setdefault(drug_id, Drug(drug_id, drug_id, synonyms=[base_name(drug_id)]))
            key = (drug_id, d["attribute"], d["text"])
            attrs.setdefault(key, DrugAttribute(drug_id, kind, d["text"], f"medicineqa-zh:{q.qid}", d["attribute"]))
    return DrugCatalog(list(drugs.values()), list(attrs.values()), problems=problems)


@dataclass(slots=True)
class ZhHit:
    drug_id: str
    heading: str  # the Chinese attribute name
    type: AttributeType
    score: float
    how: str


class ZhMedicineSearch:
    def __init__(self, catalog: DrugCatalog):
        self.records = catalog.attributes
        self.by_drug: dict[str, list[int]] = {}
        for i, a in enumerate(self.records):
            self.by_drug.setdefault(a.drug_id, []).append(i)
        # name → drug ids; the product name and its base name (without the dosage form)
        self.names: dict[str, set[str]] = {}
        for d in catalog.drugs:
            for n in {d.generic_name, base_name(d.generic_name)}:
                if len(n) >= 2:
                    self.names.setdefault(n, set()).add(d.drug_id)
        self._names_by_length = sorted(self.names, key=len, reverse=True)
        self.bm25 = bm25s.BM25()
        self.bm25.index([zh_tokens(f"{a.drug_id} {a.heading} {a.text}") for a in self.records], show_progress=False)

    def find_drugs(self, text: str) -> list[tuple[str, int]]:
        """(drug id, position of its first mention) for every name in ``text``, longest names first
        (a name inside a longer matched name does not count again)."""
        taken = [False] * len(text)
        found: dict[str, int] = {}
        for name in self._names_by_length:
            start = text.find(name)
            while start >= 0:
                if not any(taken[start:start + len(name)]):
                    for i in range(start, start + len(name)):
                        taken[i] = True
                    for drug_id in self.names[name]:
                        found[drug_id] = min(found.get(drug_id, start), start)
                start = text.find(name, start + 1)
        return sorted(found.items(), key=lambda kv: kv[1])

    def bm25_scores(self, text: str) -> np.ndarray:
        tokens = zh_tokens(text)
        vocab = self.bm25.vocab_dict
        ids = [vocab[t] for t in tokens if t in vocab]
        return self.bm25.get_scores(ids) if ids else np.zeros(len(self.records))

    def search(self, text: str, k: int = 10, *, mode: str = "entity",
               attribute_scores: Callable[[str], dict[AttributeType, float]] | None = None) -> list[ZhHit]:
        bm = self.bm25_scores(text)
        drugs = self.find_drugs(text) if mode == "entity" else []
        if not drugs:
            order = np.argsort(-bm, kind="stable")[:k]
            return [ZhHit(self.records[i].drug_id, self.records[i].heading, self.records[i].type, float(bm[i]), "bm25")
                    for i in order if bm[i] > 0]
        intents = attribute_scores(text) if attribute_scores else {}
        hits = []
        for rank, (drug_id, _) in enumerate(drugs):
            idx = self.by_drug.get(drug_id, [])
            local = np.array([bm[i] for i in idx])
            local = local / local.max() if local.size and local.max() > 0 else np.zeros(len(idx))
            for i, b in zip(idx, local):
                a = self.records[i]
                # drugs in order of mention; within a drug the asked-for attribute, then BM25
                score = (len(drugs) - rank) * 10.0 + intents.get(a.type, 0.0) * 2.0 + float(b)
                hits.append(ZhHit(drug_id, a.heading, a.type, score, "entity"))
        hits.sort(key=lambda h: -h.score)
        return hits[:k]
