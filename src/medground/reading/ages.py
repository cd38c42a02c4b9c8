"""A child's age the patient gives, against an age limit a record's item states: "my 9 year old"
is one of "Children under age 12 (extended-release preparations)"; "she's 6 months" is not one of
"Infants younger than 2 months of age". An embedding cannot compare numbers; this reads them."""

from __future__ import annotations

import re

_UNIT = r"(?P<unit>years?|yrs?|months?|mos?|weeks?|wks?)\b"
_NUMBER_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                                 "thirteen fourteen fifteen sixteen seventeen".split())}
_N = r"(?P<n>\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")"
_CHILD_WORDS = (r"son|daughter|child|kid|boy|girl|baby|toddler|infant|grandson|granddaughter|grandchild|"
                r"little one|niece|nephew")
_CHILD = re.compile(rf"\b(?:{_CHILD_WORDS})s?\b", re.IGNORECASE)
# The age is a person's: "my 9 year old", "a 4-year-old grandson", "my boy 3yrs old", "aged 4".
_OLD = re.compile(rf"(?:\b(?:my|our|his|her|your|a|an)\s+|\b(?:{_CHILD_WORDS})s?\s+){_N}(?:\s*|-){_UNIT}(?:\s*|-)old\b"
                  rf"|\baged?\s+{_N.replace('(?P<n>', '(?P<m>')}\b", re.IGNORECASE)
# "my daughter is 6", "he's 4", "she just turned 10", "she's 18 months": said of a child or of "he",
# "she", "who" in a conversation about one — never of a bottle, a dog or a wife ("my son's beagle is 3 years old")
_IS = re.compile(rf"\b(?P<who>{_CHILD_WORDS}|he|she|who)s?(?:\s+is|'s|\s+just\s+turned|\s+turned)\s+{_N}"
                 rf"(?:\s*{_UNIT})?(?:\s*old)?(?!\s*(?:mg|mcg|ml|g|kg|lb|lbs|stone|pounds|%|tablets?|pills?|capsules?|"
                 r"times?|minutes?|mins?|seconds?|hours?|hrs?|days?|doses?|puffs?|drops?|units?|pm|am|o'clock|"
                 r"miles?|feet|inches|cm|away|late|early|pregnant|weeks pregnant|months pregnant)\b)", re.IGNORECASE)
# "Children under age 12", "Children <12 years", "younger than 2 months of age", "below the age of 6 months"
_LIMIT = re.compile(r"(?:under|younger than|less than|below|<)\s*(?:the\s+)?(?:age\s+(?:of\s+)?)?(?P<n>\d{1,2})"
                    rf"(?:\s*{_UNIT})?", re.IGNORECASE)
_WHO = re.compile(r"child|pediatric|paediatric|infant|age|year|client|patient", re.IGNORECASE)


def _int(n: str) -> int:
    return int(_NUMBER_WORDS.get(n.lower(), n))


def _years(n: str, unit: str | None) -> float:
    u = (unit or "y").lower()
    return _int(n) / (12 if u.startswith("mo") else 52 if u.startswith("w") else 1)


def _said(n: str, unit: str | None) -> str:
    u = (unit or "y").lower()
    k = _int(n)
    article = "an" if str(k).startswith("8") or k in (11, 18) else "a"
    return f"{article} {k}-{'month' if u.startswith('mo') else 'week' if u.startswith('w') else 'year'}-old"


def child_age(text: str) -> tuple[float, str] | None:
    """(the age in years of the child the text speaks of, the words that give it), or None — also
    when it gives two different ages ("my daughter is 3 …, her brother, who is 14": whose is asked
    about is not read here)."""
    ages: dict[float, str] = {}
    for m in _OLD.finditer(text):
        n = m.group("n") or m.group("m")
        ages.setdefault(_years(n, m.group("unit")), _said(n, m.group("unit")))
    about_a_child = bool(_CHILD.search(text))
    for m in _IS.finditer(text):
        if m.group("who").lower() in ("he", "she", "who") and not about_a_child:
            continue
        ages.setdefault(_years(m.group("n"), m.group("unit")), _said(m.group("n"), m.group("unit")))
    if len(ages) != 1:
        return None
    return next(iter(ages.items()))


def age_limit(item: str) -> float | None:
    """The age in years under which the item applies ("Children under age 12 …"), or None."""
    m = _LIMIT.search(item)
    if m is None or not _WHO.search(item):
        return None
    return _years(m.group("n"), m.group("unit"))


def names_the_childs_age(item: str, age: float) -> bool:
    """The item's age limit takes in the child's age."""
    limit = age_limit(item)
    return limit is not None and age < limit
