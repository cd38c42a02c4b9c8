"""The words of a consultation and of a drug record: a record's items, the patient's content
phrases, whether the question is a yes/no one, and the verbatim pieces a reply quotes. No model,
no database: text in, text out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from medground.corpus.sentences import questions, sentences_of

# Closed-class words that open a yes/no question (grammar, not a list fitted to any set).
AUXILIARIES = frozenset("am is are was were do does did can could will would shall should may might must "
                         "has have had".split())
WH_WORDS = frozenset("what which who whom whose when where why how".split())
WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*")  # letters first: "B12", "CYP2C19"; never a dose ("10mg")
_CLAUSE = re.compile(r"[.?!,;:()\n]")


def clause_words(text: str) -> list[list[str]]:
    """The words of each clause of ``text`` (split at punctuation): the unit a patient's phrase,
    compound or modifier never crosses."""
    return [WORD.findall(clause) for clause in _CLAUSE.split(text)]


# A label's cross-reference after an item: "Flushing [see Warnings and Precautions ( 5.4 )]."
_CROSS_REFERENCE = re.compile(r"\s*\[\s*see[^\]]*\]\s*\.?\s*$", re.I)
# A table row of a label's adverse-reactions table: a name, then two or more numeric cells
# ("Dyspnea 13.8 7.8", "Bleed at critical site 1 (0.04%) 1 (0.04%)"). One number is no table
# ("Chronic kidney disease stage 4").
_CELL = r"(?:[<>≤≥]?\d+(?:\.\d+)?\s*%?|\(\s*[<>≤≥]?\d+(?:\.\d+)?\s*%?\s*\)|[-–—])"
_TABLE_ROW = re.compile(rf"^(?P<name>[A-Za-z][^\n]*?[A-Za-z)])(?:\s+{_CELL}){{2,}}\s*$")


def item_name(line: str) -> str:
    """What a list line names, without a label's cross-reference or a table row's numbers: the
    part a reply says and a patient's words meet ("Erythema 5 1" → "Erythema"). Always a
    verbatim piece of the line, so a quote of it is the record's own words."""
    line = _CROSS_REFERENCE.sub("", line)
    row = _TABLE_ROW.match(line)
    return row.group("name") if row else line


def split_items(text: str) -> list[str]:
    """An entry's items: its lines (each as ``item_name`` reads it), or its sentences when it is
    one paragraph of prose."""
    # bullets: "•", "-", "*", and "?" where a label's bullet character was lost in conversion
    lines = [item_name(ln.strip(" •-\t*").lstrip("?* ")) for ln in text.splitlines() if ln.strip(" •-\t*?")]
    if len(lines) > 1:
        return list(dict.fromkeys(ln for ln in lines if ln))
    parts = [x.strip() for x in _outside_parentheses(text.strip().rstrip("."))]
    if (len(parts) >= 3 and "." not in text.strip().rstrip(".") and not re.search(r"\d", text)
            and all(len(x.split()) <= 5 for x in parts)):
        return parts  # "Dyspepsia, GI bleeding, rash": a list written on one line
    from medground.corpus.sentences import split_sentences

    sentences = [s.strip() for s in split_sentences(text) if s.strip()]
    return sentences or [text.strip()]


def _outside_parentheses(line: str) -> list[str]:
    """``line`` split at each comma or semicolon (and the spaces after it) that no parenthesis
    encloses: "Enhances cognitive function (memory, thought, reasoning)" is one item, not three."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(line):
        depth += (ch == "(") - (ch == ")")
        if ch in ",;" and depth <= 0 and i + 1 < len(line) and line[i + 1].isspace():
            parts.append(line[start:i])
            start = i + 1
    parts.append(line[start:])
    return [p.strip() for p in parts]


def members(item: str) -> list[str]:
    """The members a list item names in parentheses: "CNS depressants (antihistamines, kava,
    valerian)" → antihistamines, kava, valerian. Only a list of two or more, without numbers (a
    dose or a threshold is no member), after a head of a few words (a label sentence's aside is
    no list); "e.g." and "such as" openers dropped."""
    m = re.search(r"\(([^()]*)\)", item)
    if not m or re.search(r"\d", m.group(1)) or len(item[: m.start()].split()) > 6:
        return []  # a dose, a threshold, or a label's sentence with an aside
    inner = re.sub(r"^\s*(e\.g\.,?|such as|including|eg,?)\s*", "", m.group(1), flags=re.I)
    parts = [p.strip(" .;") for p in re.split(r",|;|\band\b|\bor\b", inner)]
    parts = [p for p in parts if len(p) >= 3 and WORD.search(p)]
    return parts if len(parts) >= 2 else []


# A label sentence's framing, not what it is about: who was studied and how it was reported.
_LABEL_FRAMING = frozenset("patient patients reports reported postmarketing clinical trial trials study studies "
                           "taking treated treatment receiving observed cases".split())


def sentence_phrases(item: str, exclude: Sequence[str] = (), min_words: int = 7) -> list[str]:
    """The runs of two or three adjacent content words of a sentence item ("Dietary fiber may bind
    to levothyroxine sodium and decrease its absorption" → "Dietary fiber"): what a patient's short
    phrase meets, where the whole sentence's embedding blends all it says. None for a short item;
    a stop word, a number, a label's framing word or one of ``exclude`` (the drug's own names)
    ends a run."""
    if len(WORD.findall(item)) < min_words:
        return []
    drop = {w.lower() for name in exclude for w in WORD.findall(name)} | _LABEL_FRAMING
    stop = stop_words()
    out: list[str] = []
    for clause in _CLAUSE.split(item):
        run: list[str] = []
        for token in [*clause.split(), ""]:
            word = token.strip("\"'“”‘’")
            if WORD.fullmatch(word) and len(word) > 2 and word.lower() not in stop and word.lower() not in drop \
                    and not re.search(r"\d", word):
                run.append(word)
                continue
            out += [" ".join(run[i:i + n]) for n in (2, 3) for i in range(len(run) - n + 1)]
            run = []
    return list(dict.fromkeys(out))


# A label's highlights line: a title, a colon and its sentences ("Arthralgia: Severe and disabling
# arthralgia has been reported …"). The title names the thing in a few words, as a patient would;
# the sentence's many other words blur it ("very painful knees" met the line at 0.46 and
# "Headache" at 0.53). Not a dose line ("Adults: 500 mg …"): the sentence opens with a word.
_TITLED = re.compile(r"^(?:EXCERPT:\s*\*?\s*)?(?P<title>[A-Z][^:;()\d]{2,60}?)\s*:\s+(?=[A-Za-z])(?:\S+\s+){5}")


def item_parts(item: str, titles: bool = False) -> list[str]:
    """The parts an item names at once: "Nausea/vomiting/diarrhea" is three effects, and a
    patient's "loose stools" should meet "diarrhea" alone, not a blend of four; a short item's
    words before its parenthesis ("Pregnancy" of "Pregnancy (fetal toxicity)") are a part too, and
    with ``titles`` a label line's title (:data:`_TITLED`; asked for cautions and interactions
    entries, never a dose's "Adults: One 875 mg tablet …"). Doses ("25/100 mg"), table rows and
    long lines have none."""
    out: list[str] = []
    if "/" in item and not re.search(r"\d", item) and len(item.split()) <= 8:
        parts = [p.strip() for p in item.split("/")]
        # parts of a few words each: "Spinal/Epidural Anesthesia or Puncture" is one thing
        if all(len(WORD.findall(p)) and len(p) >= 3 and len(p.split()) <= 3 for p in parts):
            out += parts
    head = item.split(" (", 1)[0].strip()
    if head != item and len(head) >= 3 and len(item) <= 80 and not re.search(r"\d", item):
        out.append(head)  # "Pregnancy (fetal toxicity)": what it names, without the why (not a table row)
    if titles and (titled := _TITLED.match(item)) and len(titled["title"].split()) <= 6:
        out.append(titled["title"])
    return out


def with_parts(items: Sequence[str], named_members: bool = False, titles: bool = False) -> list[str]:
    """Items, each followed by its parts (:func:`item_parts`) and, with ``named_members``, the
    members its parentheses name."""
    out: list[str] = []
    for item in items:
        out.append(item)
        out += item_parts(item, titles)
        if named_members:
            out += [m for m in members(item) if m not in items]
    return list(dict.fromkeys(out))


def whole_of_parts(items: Sequence[str], titles: bool = False) -> dict[str, str]:
    """Each part (:func:`item_parts`) that is no item of its own → the first item it is part of:
    the reply quotes "Cramping/diarrhea" when a patient's leg cramps met "Cramping", so the
    patient reads what the source listed, not half of it."""
    return {p: item for item in reversed(items) for p in item_parts(item, titles) if p not in items}


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import (
        ENGLISH_STOP_WORDS,  # a general English list
    )

    return frozenset(ENGLISH_STOP_WORDS)


# Nouns a patient names a medicine by ("the heart pill", "my blood pressure pills", "her water
# tablets", "a nitro spray"), its forms among them: grammar, not a list fitted to any set. They
# and the words that describe them say which drug, not what is asked — "heart" there is no "Heart
# block". Not "drops": "my blood pressure drops" is a symptom.
REFERENTS = frozenset("pill pills tablet tablets capsule capsules medicine medicines medication medications "
                       "med meds drug drugs shot shots injection injections inhaler inhalers patch patches spray sprays "
                       "cream creams ointment ointments gel lotion syrup pen pens suppository suppositories".split())


def medicine_mentions(words: Sequence[str], stop: frozenset[str]) -> list[tuple[int, list[int]]]:
    """Each referent noun's index with the indices of the (up to two) content words right before
    it, in order ("her water pill": the noun "pill", the describing word "water")."""
    out: list[tuple[int, list[int]]] = []
    for i, w in enumerate(words):
        if w.lower() in REFERENTS:
            before: list[int] = []
            for j in range(i - 1, max(-1, i - 3), -1):
                if words[j].lower() in stop:
                    break
                before.insert(0, j)
            out.append((i, before))
    return out


def _describing_a_medicine(words: Sequence[str], stop: frozenset[str],
                           substances: frozenset[str] = frozenset()) -> set[int]:
    """Indices of referent nouns and the words that describe them; a word that names a substance
    (one of ``substances``: "calcium tablets", "iron pills") is what the medicine is, not what it
    is for, and stays."""
    out: set[int] = set()
    for i, before in medicine_mentions(words, stop):
        out.add(i)
        out.update(j for j in before if words[j].lower() not in substances)
    return out


def describing_words(text: str, substances: frozenset[str] = frozenset()) -> set[str]:
    """The words of ``text`` that name a medicine by what it is ("breo ellipta" of "the breo
    ellipta inhaler", "heart" of "the heart pill"), lower case: they say which drug."""
    stop = stop_words()
    out: set[str] = set()
    for every in clause_words(text):
        out.update(every[i].lower() for i in _describing_a_medicine(every, stop, substances))
    return out


def content_phrases(text: str, exclude: Sequence[str] = (), longest: int = 3,
                    substances: frozenset[str] = frozenset()) -> list[str]:
    """Runs of 1..``longest`` content words (stop words, ``exclude`` names, and the words that
    name a medicine by what it is for — "the heart pill" — dropped; ``substances``: words of the
    database's drug names, kept before a referent noun: "calcium tablets" is calcium)."""
    drop = {w.lower() for name in exclude for w in WORD.findall(name)}
    stop = stop_words()
    out: list[str] = []
    for every in clause_words(text):
        naming = _describing_a_medicine(every, stop, substances)
        words = [w for i, w in enumerate(every) if i not in naming and len(w) > 2 and w.lower() not in stop
                 and w.lower() not in drop]
        for n in range(1, longest + 1):
            out += [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(out))


def whole_name(name: str) -> re.Pattern[str]:
    """``name`` as a whole word (or words), any case: "Toprol" is not found in "Toprol-XL"'s part."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)


def name_words(names: Sequence[str]) -> set[str]:
    """The lower-cased words of the named drugs' names."""
    return {w.lower() for name in names for w in WORD.findall(name)}


# Words that end a purpose ("on HCTZ for blood pressure and now I have gout"): conjunctions and
# the adverbs that start the next thing said. Grammar, not a list fitted to any set.
_PURPOSE_ENDS = frozenset("and but since because so though although which that now then when while after "
                          "before until or".split())


_TAKING = frozenset("on take takes taking took start started starting prescribed using use uses".split())


# Words of a time adjunct ("last month", "a few weeks ago", "twice a day"): closed-class grammar
# that may stand between a medicine and the "for" of its purpose.
_WHEN = frozenset("""last this past a an the few couple of one two three four five six several day days week
weeks month months year years ago since now already just recently today yesterday daily nightly weekly
twice once every morning mornings night nights evening evenings""".split())


def _opens_purpose(low: Sequence[str], k: int, named: set[str]) -> bool:
    """Whether the "for" at ``k`` says why a medicine is taken: right after the medicine's name, a
    referent noun or "it", or after any word that follows "on"/"take" (a name the database lacks:
    "on HCTZ for") — with at most a time adjunct between ("put me on amlodipine last month for blood
    pressure"). No other words between: "Is Haldol okay for someone with Parkinson's?" asks about
    the patient."""
    if low[k] != "for":
        return False
    j = k - 1
    while j > 0 and low[j] in _WHEN and k - j <= 4:
        j -= 1
    return low[j] in named or (j > 0 and low[j - 1] in _TAKING)


def _purpose_spans(sentence: str, named: set[str]) -> list[tuple[int, int]]:
    """The character spans of ``sentence`` that state a purpose: from a "for" that opens one
    (:func:`_opens_purpose`) to its clause's end or the word before a conjunction."""
    spans: list[tuple[int, int]] = []
    for clause in re.finditer(r"[^.?!,;:()\n]+", sentence):  # clause_words' units, with offsets
        tokens = [(clause.start() + t.start(), clause.start() + t.end(), t.group().lower())
                  for t in WORD.finditer(clause.group())]
        low = [w for _, _, w in tokens]
        for k in range(1, len(low) - 1):
            if _opens_purpose(low, k, named):
                end = next((tokens[j - 1][1] for j in range(k + 1, len(low)) if low[j] in _PURPOSE_ENDS),
                           tokens[-1][1])
                spans.append((tokens[k][0], end))
    return spans


def purpose_words(turn: str, names: Sequence[str] = ()) -> frozenset[str]:
    """The content words that say why the patient takes the medicine: those after a "for" that
    opens a purpose (:func:`_opens_purpose`: "put me on HCTZ for blood pressure", "I take the pill
    for my thyroid"), up to the clause's end or a conjunction. They say what the drug is for, not
    what is asked: "blood pressure" there is no "Hypotension" among its side effects."""
    named, stop = name_words(names) | REFERENTS | {"it"}, stop_words()
    return frozenset(w.lower() for sentence in sentences_of(turn) for a, b in _purpose_spans(sentence, named)
                     for w in WORD.findall(sentence[a:b]) if w.lower() not in stop)


def without_purpose(turn: str, names: Sequence[str] = (), keep_question: bool = True) -> str:
    """``turn`` without the purposes it states (:func:`purpose_words`'s "for …" spans): what else
    it says. With ``keep_question`` a question sentence keeps its "for …" ("Is it for restless
    legs too?" asks exactly that): what the typer could read with ``reply.typer_skips_purpose``."""
    named = name_words(names) | REFERENTS | {"it"}
    asked = set(questions(turn)) if keep_question else set()
    out = []
    for sentence in sentences_of(turn):
        if sentence not in asked:
            for a, b in reversed(_purpose_spans(sentence, named)):
                sentence = (sentence[:a].rstrip() + " " + sentence[b:].lstrip()).strip()
            sentence = re.sub(r"\s+([.,;:!?])", r"\1", sentence)
        out.append(sentence)
    return " ".join(out)


def purpose_phrases(turn: str, names: Sequence[str] = (), substances: frozenset[str] = frozenset()) -> set[str]:
    """The turn's content phrases that only say why the drug is taken: they hold a word of a stated
    purpose (:func:`purpose_words`) and are not said again outside it — "for my heart rate, and
    now my heart rate is 44" asks about the heart rate (a helper's case)."""
    why = purpose_words(turn, names)
    if not why:
        return set()
    apart = set(content_phrases(without_purpose(turn, names, keep_question=False), names, substances=substances))
    return {p for p in content_phrases(turn, names, substances=substances)
            if set(p.lower().split()) & why and p not in apart}


def is_yes_no(turn: str) -> bool:
    """The patient's question (its last sentence with '?', else its last sentence) opens with an
    auxiliary — the sentence or its last clause ("I take amlodipine and my ankles puffed up, is
    that the medicine?") — or is a question ('?') that opens with no wh-word."""
    for s in reversed(questions(turn)):
        clauses = [c for c in re.split(r"[,;:\u2014]|\s-\s", s) if WORD.search(c)]
        for clause in dict.fromkeys([s, *clauses[-1:]]):
            words = WORD.findall(clause.lower())
            # "So, can I ...", "And is it ...": an auxiliary among the first three words, before any
            # wh-word ("What is it for?" is not a yes/no question)
            for w in words[:3]:
                if w in WH_WORDS:
                    break
                if w in AUXILIARIES:
                    return True
        # A question without its auxiliary ("Flagyl making everything taste like metal? normal?")
        # is still a yes/no question when it is no wh-question.
        if s.endswith("?") and not any(w in WH_WORDS for w in WORD.findall(s.lower())[:3]):
            return True
    return False


def opening(text: str, limit: int) -> str:
    """The opening sentences of ``text`` within ``limit`` characters (at least one sentence): a
    verbatim part of the record, so the quote stays the record's own words."""
    if len(text) <= limit:
        return text
    from medground.corpus.sentences import split_sentences

    out = ""
    for sentence in split_sentences(text):
        if out and len(out) + 1 + len(sentence) > limit:
            break
        out = f"{out} {sentence}".strip() if out else sentence
    return out if out and out in text else text[:limit].rsplit(" ", 1)[0]


def join_items(items: Sequence[str]) -> str:
    items = [i.rstrip(".") for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clinical_terms(text: str, exclude: Sequence[str] = (), limit: int = 3) -> list[str]:
    """The terms of an LLM's comma-separated list ("diarrhea, nausea"), each without the words of
    ``exclude`` names (the medicines named, which say which drug, not what is asked); a term of
    more than six words, or with no content word left, is not a term."""
    drop = {w.lower() for name in exclude for w in WORD.findall(name)}
    stop = stop_words()
    out: list[str] = []
    for part in re.split(r"[,;\n]|\band\b", text):
        words = WORD.findall(part)
        kept = [w for w in words if w.lower() not in drop]
        if not words or len(words) > 6 or not any(w.lower() not in stop for w in kept):
            continue
        term = " ".join(kept).lower()
        if term not in out:
            out.append(term)
    return out[:limit]
