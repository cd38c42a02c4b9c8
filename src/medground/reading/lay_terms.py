"""Lay glosses of clinical terms, built from MedlinePlus health topics (not a hand list).

Drug records speak clinically ("Peripheral edema", "Arthralgia/myalgia"); patients do not ("my
ankles puff up", "my thighs ache"). MedlinePlus writes each health topic for patients: its title
(and the names it is "also called") and a summary that opens by saying in plain words what the
condition is ("Edema means swelling caused by fluid in your body's tissues. It usually occurs in
the feet, ankles and legs."). A record item that names a topic gets that opening as its gloss, and
the reader matches the patient's words against the item and its gloss.

The glossary is read from the shared data (``corpora/medlineplus-topics/medline_cleaned.csv``);
without it, items simply have no gloss.
"""

from __future__ import annotations

import csv
import logging
import re
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

_CSV = Path("corpora") / "medlineplus-topics" / "medline_cleaned.csv"
_WORDS = re.compile(r"[a-z][a-z0-9'\-]*")
GLOSS_SENTENCES = 2  # the opening sentences say what the condition is; later ones drift


def _key(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


@lru_cache(maxsize=2)
def load_glossary(data: str | None = None) -> dict[str, str]:
    """Lower-cased topic name (title or an "also called" name) → the topic's opening sentences."""
    from medground.paths import DataNotFoundError, data_root

    try:
        path = data_root(data) / _CSV
    except DataNotFoundError:
        return {}
    if not path.is_file():
        log.info("no MedlinePlus topics at %s: record items get no lay gloss", path)
        return {}
    from medground.corpus.sentences import split_sentences

    out: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            summary = " ".join(split_sentences(row.get("summary", ""))[:GLOSS_SENTENCES]).strip()
            if not summary:
                continue
            names = [row.get("title", ""), *row.get("also_called", "").split(",")]
            for name in names:
                k = _key(name)
                if k and k not in out:
                    out[k] = summary
    return out


def gloss(item: str, glossary: dict[str, str]) -> str:
    """The gloss of the longest topic name the item contains as whole words ("" when none)."""
    if not glossary:
        return ""
    words = _key(re.sub(r"[/(),;]", " ", item)).split()
    for n in range(min(len(words), 5), 0, -1):
        for i in range(len(words) - n + 1):
            g = glossary.get(" ".join(words[i:i + n]))
            if g:
                return g
    return ""
