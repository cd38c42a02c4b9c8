"""Checks a medicine database must pass before a reply can be trusted.

- ``brand_of_several`` (error): one brand name listed under two generics ("Allegra" under
  fexofenadine and loratadine): a patient naming it would get either drug's entries.
- ``name_of_several`` (error): a name that is one drug's brand and another drug's synonym.
- ``brand_is_generic`` (error): a brand that is another drug's generic name ("aspirin" under
  salicylic acid as well as its own record): every mention of it would name two drugs.
- ``near_duplicate`` (warning): two drugs whose generic names differ by a letter or two
  ("latanaprost" / "latanoprost"): probably one drug split by a misspelling in a source.
- ``local_route_only`` (info): every entry of the drug describes a product for a local route (an
  eye ointment for ciprofloxacin): replies must say so to a patient on tablets.

The build resolves what a source can decide (``resolve_brand_conflicts``; a misspelt generic name
joins the drug it misspells, ``misspelt_generics``); the rest is reported.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from medground.drug_schema import Drug, NameLexicon, normalize_name

Severity = Literal["error", "warning", "info"]
# Local routes of administration (the FDA route vocabulary's local ones), as drug classes name them.
LOCAL_ROUTES = {"ocular": "ophthalmic", "ophthalmic": "ophthalmic", "otic": "otic", "topical": "topical",
                "vaginal": "vaginal", "nasal": "nasal"}


@dataclass(frozen=True, slots=True)
class AuditFinding:
    kind: str
    severity: Severity
    name: str
    drug_ids: tuple[str, ...]
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def is_partial_name(name: str, generic: str) -> bool:
    """A fragment of the generic's own name, not another name for it: cut at a comma, or its last
    word alone (the salt or chemical class) — "alcohol," of "benzyl alcohol" (an inverted "Alcohol,
    benzyl" cut short) would make every "a glass of alcohol" a mention of benzyl alcohol.
    "amphotericin" (amphotericin B) and "zoster vaccine" stay names."""
    words = [w.strip(".,;:()").lower() for w in name.split()]
    whole = [w.strip(".,;:()").lower() for w in generic.split()]
    if not words or not set(words) < set(whole):
        return False
    return "," in name or words == whole[-1:]


def local_route(drug: Drug) -> str | None:
    """The local route a drug's class names ("Ocular antibacterial" → "ophthalmic"), else None.
    Every part of the class must name it, and none may be systemic: azithromycin is listed among
    "Macrolides" and "Otic Systemic Anti-infectives" (an oral drug for ear infections)."""
    routes = set()
    for part in filter(None, (p.strip() for p in drug.drug_class.lower().split(";"))):
        words = set(re.findall(r"[a-z]+", part))
        route = next((v for k, v in LOCAL_ROUTES.items() if k in words), None)
        if route is None or "systemic" in words:
            return None
        routes.add(route)
    return routes.pop() if len(routes) == 1 else None


def audit(drugs: Sequence[Drug], *, lexicon: NameLexicon | None = None, near_ratio: float = 90.0) -> list[AuditFinding]:
    """Every finding; with the name ``lexicon``, two names it knows as distinct drugs are never near duplicates."""
    from rapidfuzz import fuzz

    found: list[AuditFinding] = []
    brand_of: dict[str, set[str]] = defaultdict(set)
    synonym_of: dict[str, set[str]] = defaultdict(set)
    for d in drugs:
        for b in d.brand_names:
            brand_of[normalize_name(b)].add(d.drug_id)
        for s in d.synonyms:
            synonym_of[normalize_name(s)].add(d.drug_id)
    for name, ids in sorted(brand_of.items()):
        if len(ids) > 1:
            found.append(AuditFinding("brand_of_several", "error", name, tuple(sorted(ids)),
                                      f"the brand {name!r} is listed under {len(ids)} generics"))
        others = synonym_of.get(name, set()) - ids
        if others:
            found.append(AuditFinding("name_of_several", "error", name, tuple(sorted(ids | others)),
                                      f"{name!r} is a brand of {', '.join(sorted(ids))} and a synonym of "
                                      f"{', '.join(sorted(others))}"))
    generic_of = {d.generic_name: d.drug_id for d in drugs}
    for d in drugs:
        for b in d.brand_names:
            other = generic_of.get(normalize_name(b))
            if other is not None and other != d.drug_id:
                found.append(AuditFinding("brand_is_generic", "error", normalize_name(b), (d.drug_id, other),
                                          f"the brand {b!r} of {d.drug_id} is the generic name of {other}"))
    generics = sorted((d.generic_name, d.drug_id) for d in drugs if "/" not in d.generic_name)
    known = set(lexicon.canonical_to_variants) if lexicon else set()  # citalopram and escitalopram are two drugs
    for i, (g, gid) in enumerate(generics):
        for h, hid in generics[i + 1:]:
            if abs(len(g) - len(h)) <= 2 and g.split()[0] != h.split()[0] and fuzz.ratio(g, h) >= near_ratio \
                    and not (g in known and h in known):
                found.append(AuditFinding("near_duplicate", "warning", f"{g} ~ {h}", (gid, hid),
                                          "two drugs whose generic names differ by a letter or two"))
    for d in drugs:
        for s in d.synonyms:
            if is_partial_name(s, d.generic_name):
                found.append(AuditFinding("partial_name", "error", s, (d.drug_id,),
                                          f"{s!r} is a fragment of the generic name {d.generic_name!r}, "
                                          "not another name for it"))
        route = local_route(d)
        if route:
            found.append(AuditFinding("local_route_only", "info", d.generic_name, (d.drug_id,),
                                      f"its entries describe an {route} product ({d.drug_class})" if route[0] in "aeiou" else f"its entries describe a {route} product ({d.drug_class})"))
    return found


def resolve_brand_conflicts(drugs: Sequence[Drug], lexicon: NameLexicon) -> list[str]:
    """One name, one drug, where a source decides it; returns what was changed.

    A brand listed under several generics stays with the one the name lexicon links it to. A name
    that is one drug's brand (a source table's own link) and another's synonym (a lexicon variant)
    is dropped from the synonyms."""
    changes: list[str] = []
    by_id = {d.drug_id: d for d in drugs}
    # another drug's generic name is that drug's, never a brand of this one (the book's "Salicylic
    # acid (aspirin, …)" beside aspirin's own record)
    generic_of = {d.generic_name: d.drug_id for d in drugs}
    for d in drugs:
        taken = [b for b in d.brand_names if generic_of.get(normalize_name(b), d.drug_id) != d.drug_id]
        if taken:
            d.brand_names = [b for b in d.brand_names if b not in taken]
            changes += [f"brand {normalize_name(b)!r}: dropped from {d.drug_id}, the generic name of "
                        f"{generic_of[normalize_name(b)]}" for b in taken]
    brand_of: dict[str, set[str]] = defaultdict(set)
    for d in drugs:
        for b in d.brand_names:
            brand_of[normalize_name(b)].add(d.drug_id)
    for name, ids in sorted(brand_of.items()):
        if len(ids) > 1 and lexicon:
            canon = set(lexicon.variant_to_canonical.get(name, []))
            keep = {i for i in ids if by_id[i].generic_name in canon}
            if len(keep) == 1:
                for i in sorted(ids - keep):
                    by_id[i].brand_names = [b for b in by_id[i].brand_names if normalize_name(b) != name]
                    changes.append(f"brand {name!r}: kept for {next(iter(keep))} (name lexicon), dropped from {i}")
                ids = keep
        for d in drugs:
            if d.drug_id not in ids and any(normalize_name(s) == name for s in d.synonyms):
                d.synonyms = [s for s in d.synonyms if normalize_name(s) != name]
                changes.append(f"{name!r}: a brand of {', '.join(sorted(ids))}, dropped as a synonym of {d.drug_id}")
    return changes


def misspelt_generics(drugs: Sequence[Drug], lexicon: NameLexicon, near_ratio: float = 90.0) -> dict[str, str]:
    """{drug id: the drug id it is a misspelling of}: a generic name the name lexicon does not know,
    a letter or two from one it knows as a canonical name ("latanaprost" in a dosage table beside
    the prototype table's "latanoprost"; "cholesevelam" / "colesevelam"). Two names the lexicon
    knows (citalopram, escitalopram) are two drugs, never one."""
    from rapidfuzz import fuzz

    if not lexicon:
        return {}
    known = {d.generic_name: d.drug_id for d in drugs if lexicon.canonical(d.generic_name) == d.generic_name}
    out: dict[str, str] = {}
    for d in drugs:
        g = d.generic_name
        if "/" in g or g in known or lexicon.canonical(g):
            continue
        near = [i for h, i in known.items() if abs(len(g) - len(h)) <= 2 and g.split()[0] != h.split()[0]
                and fuzz.ratio(g, h) >= near_ratio]
        if len(near) == 1:
            out[d.drug_id] = near[0]
    return out


def _fold(name: str) -> str:
    """A name as two spellings of it agree: lower case, hyphens as spaces, a plural's "s" dropped
    ("17-beta-estradiol" / "17 beta-estradiol"; "conjugated estrogens" / "conjugated estrogen")."""
    words = re.sub(r"[-\s]+", " ", name.lower()).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def same_drug_records(drugs: Sequence[Drug], entry_types: Mapping[str, set[str]]) -> dict[str, str]:
    """{drug id: the drug id it duplicates}: a record holding a dosage entry only (a drug table's
    row) that one of its names calls another record by that record's generic name — a synonym
    ("estradiol", whose lexicon names hold "17 beta-estradiol", beside the prototype table's
    "17-beta-estradiol"), or a part of a row that names forms ("valproic acid, divalproex", whose
    brand Depakote a patient names). Its brands and dose belong to the drug with the full record:
    a patient on Depakote was answered "no entry on its side effects"."""
    by_generic: dict[str, list[str]] = defaultdict(list)
    for d in drugs:
        by_generic[_fold(d.generic_name)].append(d.drug_id)
    out: dict[str, str] = {}
    for d in drugs:
        if entry_types.get(d.drug_id, set()) != {"dosage"}:
            continue
        names = [d.generic_name, *(p.strip() for p in d.generic_name.split(",")), *d.synonyms]
        hits = {i for n in names for i in by_generic.get(_fold(n), ()) if i != d.drug_id
                and len(entry_types.get(i, ())) > 1}
        if len(hits) == 1:
            out[d.drug_id] = hits.pop()
    return out
