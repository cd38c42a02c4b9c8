"""Claim-level attribution of free-text answers: is each claim stated by the passages it cites?

An answer is split into claims (its sentences that claim something; quoted source words after an
answer are the source's, not claims). Each claim is checked against the concatenation of the
passages it cites, and against each cited passage alone:

    claim supported       its cited passages, together, state it (a claim citing nothing is not)
    citation recall       supported claims / claims                      (ALCE's citation recall)
    citation precision    (claim, citation) pairs whose passage states the claim on its own,
                          or whose removal leaves the claim unsupported / all pairs

A judge gives P(the passage states the claim): ``LLMClaimJudge`` reads it from one yes/no
token (threshold fitted on a labelled development set: benchmarks/attribution.py), and
``LexicalClaimJudge`` is the share of the claim's content terms found in the passage — unlike the
reader's own support check it does not ignore the question's words, so "Adults can safely take
40 grams of acetaminophen" is not supported by a passage that only names acetaminophen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from medground.eval.records import RunRecord
from medground.reading.claims import ClaimJudge
from medground.reading.citations import answer_sentences, cited_numbers, without_citations

# A quote line (reading/reply.py): "Label: “source words” [n]", or the closest-passage reply
# "… the closest is Label [n]: “…”" (or "… closest to your question is Label [n]: “…”"). Source words, not the answer's claims.
_QUOTED = re.compile(r"(?:[^.!?\[\]\u201c\u201d]*(?:\[\d+\])?:\s*)?\u201c[^\u201d]*\u201d(?:\s*\[\d+\])?")


@dataclass(slots=True)
class Claim:
    text: str  # without its citation marks
    cited: list[int]


def split_claims(answer: str) -> list[Claim]:
    """The answer's claims with the passage numbers each cites. Quote lines are dropped (the
    passage's own words, with their label), so are sentences with no content left; a sentence
    that only cites ("See [2].") lends its citations to the claim before it."""
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    claims: list[Claim] = []
    for sentence in answer_sentences(_QUOTED.sub(" ", answer)):
        numbers = cited_numbers(sentence)
        text = without_citations(sentence)
        words = tok.tokenize(text)
        if len(words) < 2:  # "[2]." or a quoted line's label: no claim of its own
            if claims and numbers:
                claims[-1].cited.extend(n for n in numbers if n not in claims[-1].cited)
            continue
        claims.append(Claim(text, numbers))
    return claims


@dataclass(slots=True)
class ClaimCheck:
    claim: str
    cited: list[int]
    p_together: float | None  # P(the cited passages, joined, state the claim)
    supported: bool
    alone: dict[int, bool] = field(default_factory=dict)  # each cited passage on its own
    relevant: dict[int, bool] = field(default_factory=dict)  # counted for precision


@dataclass(slots=True)
class Attribution:
    claims: list[ClaimCheck]

    @property
    def recall(self) -> float | None:
        return sum(c.supported for c in self.claims) / len(self.claims) if self.claims else None

    @property
    def precision(self) -> float | None:
        pairs = [r for c in self.claims for r in c.relevant.values()]
        return sum(pairs) / len(pairs) if pairs else None

    def to_dict(self) -> dict:
        return {"recall": self.recall, "precision": self.precision,
                "claims": [{"claim": c.claim, "cited": c.cited, "p": c.p_together, "supported": c.supported,
                            "alone": {str(k): v for k, v in c.alone.items()}} for c in self.claims]}


def attribute(answer: str, passages: Mapping[int, str], judge: ClaimJudge, threshold: float) -> Attribution:
    """Check every claim of ``answer`` against the passages it cites (``passages``: number → text)."""
    checks = []
    for claim in split_claims(answer):
        cited = [n for n in claim.cited if n in passages]
        if not cited:
            checks.append(ClaimCheck(claim.text, claim.cited, None, False))
            continue
        p = judge.p_supported(claim.text, "\n".join(passages[n] for n in cited))
        supported = p is not None and p >= threshold
        alone: dict[int, bool] = {}
        if len(cited) == 1:
            alone[cited[0]] = supported
        else:
            for n in cited:
                pn = judge.p_supported(claim.text, passages[n])
                alone[n] = pn is not None and pn >= threshold
        relevant = {}
        for n in cited:
            if alone[n]:
                relevant[n] = True
            elif not supported or len(cited) == 1:
                relevant[n] = False
            else:  # ALCE: a citation that is needed — without it the rest no longer supports
                rest = [m for m in cited if m != n]
                pr = judge.p_supported(claim.text, "\n".join(passages[m] for m in rest))
                relevant[n] = pr is None or pr < threshold
        checks.append(ClaimCheck(claim.text, claim.cited, p, supported, alone, relevant))
    return Attribution(checks)


def mean(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


ATTRIBUTION = "attribution.json"


def free_text_answers(records: Sequence[RunRecord]) -> list[RunRecord]:
    """The answered free-text records (no options were asked) that cite something."""
    return [r for r in records if r.correct is None and r.outcome == "answered"]


def chunk_passages(record: RunRecord, store) -> dict[int, str]:
    """number → "book / chapter / section: text" of each passage the record cites (the heading
    too: the reader saw it). Records written before citation numbers were kept number them 1..n."""
    ids = record.citation_ids
    numbers = record.citation_numbers or list(range(1, len(ids) + 1))
    chunks = {c.chunk_id: c for c in store.get_chunks(ids)} if ids else {}
    out = {}
    for n, cid in zip(numbers, ids):
        c = chunks.get(cid)
        if c is not None:
            out[n] = f"{' / '.join(p for p in (c.book, c.chapter, *c.section_path) if p)}: {c.text}"
    return out


def attribute_run(records: Sequence[RunRecord], store, judge: ClaimJudge, threshold: float) -> dict:
    """Per free-text answer: claims, citation recall and precision; their means over answers."""
    per = {}
    for r in free_text_answers(records):
        per[r.qid] = attribute(r.text, chunk_passages(r, store), judge, threshold).to_dict()
    claims = [c for a in per.values() for c in a["claims"]]
    return {"judge": judge.name, "threshold": threshold, "answers": len(per), "claims": len(claims),
            "claims_supported": sum(c["supported"] for c in claims) / len(claims) if claims else None,
            "citation_recall": mean([a["recall"] for a in per.values()]),
            "citation_precision": mean([a["precision"] for a in per.values()]), "per_answer": per}
