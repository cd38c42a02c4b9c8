"""Consultation replies judged end to end (issue 27): the reply's cited entry at drug and drug +
attribute level; a rubric of automatic checks (the first sentence names the asked item when the
entry has it, a yes/no reply agrees with the entry, no quoted text outside the cited entries);
wrong and right abstention; and, where blind labels of the answering entries exist, the same
checks against them. `benchmarks/consult_e2e.py` builds the items and calls this.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medground.drug_schema import ConsultReply, consult_detail
from medground.eval.evaluators.abstention import abstention_rates
from medground.eval.evaluators.base import Evaluator, percentile, rate
from medground.schema import Answer, Question

LIST_ATTRIBUTES = frozenset({"adverse_reactions", "interactions", "contraindications", "warnings", "boxed_warning"})


@dataclass(frozen=True)
class ConsultItem:
    """One consultation to answer: the dialogue ("Patient: …" / "Pharmacist: …" lines, the last
    the question), its subject drug id, the attribute that answers (None: no entry answers)."""

    id: str
    dialogue: str
    subject: str
    attribute: str | None
    unanswerable: bool
    terms: list[str] = field(default_factory=list)  # the writer's words for what is asked
    kind: str | None = None  # "yes_no", … (the written set says)
    second_drug: str | None = None
    features: list[str] = field(default_factory=list)
    # the writer's answering item, copied from the database's entry (the sets written apart)
    answer_item: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConsultItem:
        return cls(id=d["id"], dialogue=d["dialogue"], subject=d["subject"], attribute=d.get("attribute"),
                   unanswerable=bool(d.get("unanswerable")), terms=list(d.get("terms") or []), kind=d.get("kind"),
                   second_drug=d.get("second_drug"), features=list(d.get("features") or []),
                   answer_item=d.get("answer_item"))

    def question(self) -> Question:
        lines = self.dialogue.splitlines()
        return Question(qid=self.id, dataset="consult", question=lines[-1], context="\n".join(lines[:-1]))


@dataclass
class ConsultReference:
    """What the judge compares with: each drug's display name, each (drug, attribute) entry's text,
    and the blind labels of which entries answer (by item id; the written set only)."""

    display: dict[str, str]
    entries: dict[tuple[str, str], list[str]]
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_store(cls, store, labels: Path | Sequence[Path] | None = None) -> ConsultReference:
        """``labels``: the blind entry-label files (JSONL, one record per dialogue id); a missing
        file labels nothing."""
        entries: dict[tuple[str, str], list[str]] = {}
        for a in store.attributes():
            entries.setdefault((a.drug_id, a.type.value), []).append(a.text)
        got: dict[str, dict[str, Any]] = {}
        for path in [labels] if isinstance(labels, Path) else (labels or []):
            if path.exists():
                got.update({r["id"]: r for r in map(json.loads, path.read_text().splitlines()) if r})
        return cls({d.drug_id: d.display_name for d in store.drugs()}, entries, got)


def has_term(text: str, terms: Sequence[str]) -> bool:
    low = text.lower()
    return any(t.lower() in low or (t.lower().endswith("s") and t.lower()[:-1] in low) for t in terms if t.strip())


def reply_of(answer: Answer) -> tuple[str, list[str]]:
    """(the reply's first sentence, the texts it quotes or names from the entries) from the typed
    consultation detail; an answer without one (another pipeline, another mode) gives (its text, [])."""
    consult = consult_detail(answer.detail)
    reply: ConsultReply | None = consult.reply if consult is not None else None
    if reply is None:
        return answer.text, []
    return reply.first_sentence, [*reply.quotes, *reply.matched]


def names_item(text: str, item: str) -> bool:
    """``text`` names the labelled item, or one part of an item that lists several ("a/b/c")."""
    low = text.lower()
    return any(p.strip() and p.strip().lower() in low for p in [item, *item.split("/")])


class ConsultationEvaluator(Evaluator[ConsultItem, Answer]):
    name = "consultation"

    def __init__(self, reference: ConsultReference):
        self.reference = reference

    def question(self, item: ConsultItem) -> Question:
        return item.question()

    def judge(self, item: ConsultItem, answer: Answer) -> dict[str, Any]:
        """Automatic checks of one reply against the item's gold and the database's gold entries."""
        ref = self.reference
        # an abstention may cite what it offers instead (a dose-only drug's class prototype,
        # reading/class_prototype.py): it cites no entry as the answer
        cited = answer.citations[0] if answer.citations and answer.outcome == "answered" else None
        gold_drug = ref.display.get(item.subject, item.subject)
        drug_ok = cited is not None and cited.chapter == gold_drug
        attr_ok = drug_ok and item.attribute is not None and cited.section == item.attribute
        # A question about two drugs together is also answered by the other drug's interactions entry.
        second = (item.second_drug or "").lower()
        if (cited is not None and item.attribute == "interactions" and second and "two_drugs" in item.features
                and cited.chapter.lower() == second and cited.section == "interactions"):
            drug_ok = attr_ok = True
        answered = answer.outcome == "answered"
        row: dict[str, Any] = {"id": item.id, "outcome": answer.outcome, "drug_ok": drug_ok, "drug_attr_ok": attr_ok,
                               "unanswerable": item.unanswerable, "seconds": answer.timings.get("total")}
        first, said = reply_of(answer)
        cited_text = " ".join(c.text for c in answer.citations)
        outside = [q for q in said if q not in cited_text]
        row["claims_inside"] = not outside
        checks = [row["claims_inside"]]
        if item.unanswerable:
            row["rubric"] = not answered
            row["reply"] = answer.text
            return row
        if item.answer_item and cited is not None:
            # The writers copied their item from the book, whose prototype tables hold "Caution"
            # lines inside the Contraindications row; the database files those as warnings. The
            # entry that holds the writer's item answers whatever the writer called its type.
            holding = " ".join(ref.entries.get((item.subject, cited.section), []))
            row["cites_item_entry"] = attr_ok or (drug_ok and has_term(holding, [item.answer_item]))
        gold_text = " ".join(ref.entries.get((item.subject, item.attribute or ""), []))
        if item.terms:
            has = has_term(gold_text, item.terms)
            row["entry_has_asked"] = has
            if has:
                row["first_names_asked"] = answered and has_term(first, item.terms)
                checks.append(row["first_names_asked"])
            if item.kind == "yes_no" and item.attribute in LIST_ATTRIBUTES:
                says_listed = answered and "does not list" not in first
                row["yes_no_agrees"] = says_listed == has
                checks.append(row["yes_no_agrees"])
        row["rubric"] = answered and attr_ok and all(checks)
        labels = ref.labels.get(item.id)
        if labels is not None:
            self._judge_labelled(row, labels, answer, first)
        row["reply"] = answer.text
        return row

    def _judge_labelled(self, row: dict[str, Any], labels: dict[str, Any], answer: Answer, first: str) -> None:
        """Against the blind labels: the cited entry is one that answers; the reply names (or
        quotes) an answering item; a yes/no question's reply agrees with whether it is listed;
        where no entry answers, the reply abstains or says the database does not list it."""
        answered = answer.outcome == "answered"
        says_listed = answered and "does not list" not in first
        # an abstention may cite what it offers instead (a dose-only drug's class prototype,
        # reading/class_prototype.py): it cites no entry as the answer
        cited = answer.citations[0] if answer.citations and answer.outcome == "answered" else None
        display = self.reference.display
        good = {(display.get(a["drug"], a["drug"]), a["attribute"]) for a in labels["answers"]}
        items = [i for a in labels["answers"] for i in a["items"]]
        if not labels["answers"]:
            row["rubric_labelled"] = not says_listed and row["claims_inside"]
            return
        row["cites_answering_entry"] = cited is not None and (cited.chapter, cited.section) in good
        checks = [answered, row["cites_answering_entry"], row["claims_inside"]]
        if items:
            quotes = reply_of(answer)[1]
            row["names_answering_item"] = answered and any(
                names_item(first, i) or any(q and (q in i or i in q) for q in quotes) for i in items)
            checks.append(row["names_answering_item"])
        if labels.get("listed") is not None:
            row["yes_no_agrees_labelled"] = says_listed == labels["listed"]
            checks.append(row["yes_no_agrees_labelled"])
        row["rubric_labelled"] = all(checks)

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        answerable = [r for r in rows if not r["unanswerable"]]
        unans = [r for r in rows if r["unanswerable"]]
        secs = [r["seconds"] or 0.0 for r in rows]

        def where(key: str) -> dict[str, Any]:
            return rate([r[key] for r in rows if key in r])

        return {
            "n": len(rows), "answerable": len(answerable), "unanswerable": len(unans),
            "cites_drug": rate([r["drug_ok"] for r in answerable]),
            "cites_drug_attribute": rate([r["drug_attr_ok"] for r in answerable]),
            "cites_item_entry": where("cites_item_entry"),
            "rubric_pass": rate([r["rubric"] for r in rows]),
            "first_names_asked": where("first_names_asked"),
            "yes_no_agrees": where("yes_no_agrees"),
            "claims_inside_cited": rate([r["claims_inside"] for r in rows]),
            # against the blind labels of which entries answer (the written set only)
            "cites_answering_entry": where("cites_answering_entry"),
            "names_answering_item": where("names_answering_item"),
            "yes_no_agrees_labelled": where("yes_no_agrees_labelled"),
            "rubric_labelled": rate([r["rubric_labelled"] if "rubric_labelled" in r else r["rubric"] for r in rows])
            if any("rubric_labelled" in r for r in rows) else None,
            **abstention_rates([r["outcome"] != "answered" for r in answerable],
                               [r["outcome"] != "answered" for r in unans]),
            "seconds_p50": percentile(secs, 0.5),
            "seconds_p95": percentile(secs, 0.95)}
