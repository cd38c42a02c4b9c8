"""Which drug a consultation is about: the subject drug among every drug the user named.

A dialogue names several drugs: the one the user asks about, one they used to take, one a
relative takes. Searching the whole history for all of them (or letting the co-mentioned generic
outrank the brand asked about) retrieves the wrong records. Each recognised mention is scored:

  in the last user turn        +3   (the question itself)
  the user's own medicine      +1   ("my X", "I take/I'm on/started on/prescribed X")
  a drug the user left         -2   ("used to take", "stopped", "switched off", "instead of")
  someone else's medicine      -1.5 ("my husband takes X", "my sister said X ...")
  recency                      +0.5 per turn closer to the end
  match quality                exact generic or brand 1.0, synonym 0.9, component 0.7, fuzzy < 1

Ties go to the earlier mention within the last turn (questions name their subject first:
"can I take ibuprofen with my lisinopril" is about ibuprofen), then to the more recent turn.
A last turn without a drug ("is it safe in pregnancy?") inherits the subject of the turns before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from medground.corpus.sentences import questions, sentences_of
from medground.retrieve.drugs import PARTIAL_NAME, DrugRetriever

_OWN = re.compile(r"\b(my|i take|i'm taking|i am taking|i'm on|i am on|i('ve| have) been (taking|on)|"
                  r"start(s|ed|ing)? (me )?on|put(s|ting)? me on|switch(ed|ing)? me (over )?to|"
                  r"prescribed( me)?|gave me|taking|(script|prescription|rx) for)\W+(\w+\W+){0,2}$")
# Someone else's medicine: "my husband takes X", "my sister said X is safer" — until the patient
# speaks of themself again ("my wife is on X, but I take Y": Y is the patient's).
_THIRD = re.compile(r"\b(husband|wife|partner|sister|brother|mother|mom|mum|mummy|mommy|mam|father|dad|daddy|"
                    r"son|daughter|child|children|kids?|baby|toddler|teenager|boyfriend|girlfriend|fianc[ée]e?|"
                    r"friend|neighbou?r|aunt|uncle|cousin|niece|nephew|nan|nana|gran|granny|grand\w+|"
                    r"step\w+|parents?|in-laws?|roommate|flatmate|he|him|his|she|her|they|them|their)\b(?:(?!\b(?:i|i'm|me|my)\b)[^.?!]){0,30}$")
# "they added atorvastatin", "they've started me on X": "they" are the prescribers, not a relative
# whose medicine it is (a helper's probe: "after my heart attack they started me on clopidogrel, and
# the next week they added atorvastatin")
_PRESCRIBERS = re.compile(r"\bthey\s+(?:have\s+|'ve\s+|just\s+|also\s+|then\s+)*(?:added|started|put|gave|"
                          r"prescribed|switched|changed|upped|increased|doubled)\b[^.?!]{0,30}$")
_PRODUCT_MODIFIER = re.compile(r"\b(baby|infant|child|children|kids?|adult|junior)\s+$")
# The patient means to take a relative's medicine ("my wife has a bottle of ibuprofen … can I take
# those with my lithium?"): when the drug named last before it is a relative's, it becomes the
# patient's own.
_TAKE_THEIRS = re.compile(
    r"\b(?:(?:can|could|may|should|would|might)\s+i\s+(?:be\s+able\s+to\s+)?"
    r"|(?:is|would)\s+it\s+be\s+(?:ok|okay|safe|alright|fine)\s+(?:for\s+me\s+)?to\s+"
    r"|(?:is|it's)\s+it\s+(?:ok|okay|safe|alright|fine)\s+(?:for\s+me\s+)?to\s+"
    r"|(?:if|when)\s+i\s+)(?:just\s+|also\s+)?(?:take|use|try|borrow|have)\s+"
    r"(?:(?:some|any|one|two|a\s+couple|a\s+few)\s+of\s+)?"
    r"(?:those|these|them|it|some|one|a\s+few|a\s+couple|hers|his|theirs)\b")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|me|my|mine|myself)\b")
# A mention this close to a name is the name, not a guess (exact 1.0, synonym 0.9).
NAMED_OUTRIGHT = 0.9
# A medicine being started ("starting me on X. I already take Y — anything I should know?"): what
# the question is about; the one already taken is context, and is read beside it as a partner.
_NEW = re.compile(r"\b(start(s|ed|ing)? (me |him |her |them )?on|put(s|ting)? (me |him |her |them )?on|"
                  r"(just |has |have |'ve )?(added|adding|add)|new (prescription|script|rx) for|"
                  r"switch(ed|ing)? (me |him |her |them )?(over )?to|begin(s|ning)? (me )?on)\W+(\w+\W+){0,2}$"
                  r"|\bnew\W+$|\bnew (one|medicine|medication|tablet|pill|drug|prescription)s?\b[^.?!]{0,30}\b(called|named)\W+$")
# "What's the new one for?": the drug marked new in an earlier turn is the one asked about.
_THE_NEW_ONE = re.compile(r"\bthe new (one|ones|medicine|medication|tablets?|pills?|drug|prescription|stuff|capsules?)\b",
                          re.IGNORECASE)
_LEFT = re.compile(r"\b(used to (take|be on)|stopped( taking)?|switched (me )?(off|from)|no longer (take|on)|"
                   r"instead of|quit|came off|weaned off)\W+(\w+\W+){0,2}$")
# "switched me from simvastatin to atorvastatin": the drug after "to" is the one switched to
_SWITCHED_TO = re.compile(r"\b(switch|chang)(ed|ing)?\b[^.?!]{0,40}\bto\W+$")


@dataclass(slots=True)
class Mention:
    drug_id: str
    turn: int  # index among the user turns
    position: int  # character offset within that turn
    span: str
    match_score: float
    own: bool = False
    left: bool = False
    third_party: bool = False
    new: bool = False  # being started or just added
    how: str = ""  # the retriever's account: "exact brand 'zestril'", "fuzzy 'dilantin'→'dolantin' (88)"


@dataclass(slots=True)
class Subject:
    drug_id: str
    score: float
    mentions: list[Mention] = field(default_factory=list)


def partial_only(subjects: Sequence[Subject]) -> bool:
    """Every recognised drug was met only through some words of a longer name (``PARTIAL_NAME``:
    "sugar" of "manna sugar"), none by a name of its own."""
    return bool(subjects) and all(s.mentions and all(m.match_score <= PARTIAL_NAME for m in s.mentions)
                                  for s in subjects)


def mentions(retriever: DrugRetriever, turns: list[str]) -> list[Mention]:
    out: list[Mention] = []
    for t, text in enumerate(turns):
        low = text.lower()
        for m in retriever.find_drugs(text):
            pos = low.find(m.span)
            before = low[max(0, pos - 40):pos] if pos >= 0 else ""
            # a person noun right before the name, no possessive, names the product, not its
            # owner: "a baby aspirin" is low-dose aspirin (a pronoun, "her aspirin", still owns it)
            before = _PRODUCT_MODIFIER.sub(" ", before)
            score = m.score
            third = bool(_THIRD.search(before)) and not _PRESCRIBERS.search(before)
            out.append(Mention(m.drug_id, t, pos if pos >= 0 else len(low), m.span, score,
                               own=bool(_OWN.search(before)) and not third,
                               left=bool(_LEFT.search(before)) and not _SWITCHED_TO.search(before),
                               third_party=third,
                               new=bool(_NEW.search(before) or _SWITCHED_TO.search(before)), how=m.how))
        # "my husband takes amlodipine and was just prescribed simvastatin": a drug named further
        # on in the same sentence, with no first person between, is the same person's
        here = sorted((m for m in out if m.turn == t), key=lambda m: m.position)
        for prev, m in zip(here, here[1:]):
            between = low[prev.position + len(prev.span):m.position]
            if prev.third_party and not m.third_party and not _FIRST_PERSON.search(between) \
                    and not re.search(r"[.?!]", between):
                m.third_party, m.own = True, False
        for take in _TAKE_THEIRS.finditer(low):
            # "those" is the drug named last before "can I take those" (this turn or earlier): when
            # that is a relative's, it becomes the patient's ("my wife is on warfarin, but I take
            # Pradaxa … should I take it now?" is about Pradaxa)
            before = [m for m in out if (m.turn, m.position) < (t, take.start())]
            if before and before[-1].third_party:
                for m in (m for m in out if m.drug_id == before[-1].drug_id and m.third_party):
                    m.third_party, m.own = False, True
    return out


# What a drug named in the last turn's question sentences adds to its subject score (the drugrag
# pipeline's ``asked_subject_weight``; session 29, dev 3 of 606 replies gained, 0 lost).
ASKED_WEIGHT = 1.0
# What a medicine being started or just added adds to its subject score (``new_subject_weight``).
NEW_WEIGHT = 0.5


_FUZZY = re.compile(r"fuzzy '([^']+)'→'([^']+)'")


def read_as(subject: Subject) -> tuple[str, str] | None:
    """(what the patient wrote, the database name it was read as) when every mention of the subject
    is a fuzzy match of a misspelt or unknown name; None when it was named outright somewhere."""
    fuzzy = [_FUZZY.match(m.how) for m in subject.mentions]
    if not subject.mentions or not all(fuzzy):
        return None
    return fuzzy[0].group(1), fuzzy[0].group(2)


def read_as_note(subject: Subject, drug) -> str:
    """What a reply adds when its subject was found only through a misspelling's nearest name:
    "Dilantin", unknown to the database, was read as "Dolantin", a brand of meperidine — the
    patient must see which medicine was answered for. Empty when it was named outright."""
    got = read_as(subject)
    if got is None:
        return ""
    written, name = got
    also = "" if name == drug.generic_name.lower() else f", a name of {drug.display_name}"
    return f" (I read “{written}” as {name.title()}{also}.)"


def resolve_subjects(retriever: DrugRetriever, turns: list[str], *, asked_weight: float = ASKED_WEIGHT,
                     new_weight: float = 0.0) -> list[Subject]:
    """Drugs of the user turns ranked as the consultation's subject (best first). ``asked_weight``:
    added for a drug named in the last turn's question sentences ("… carafate along with my
    omeprazole. How does the carafate work?" asks about sucralfate); ``new_weight``: for a drug
    being started or just added ("starting me on Mayzent. I already take metoprolol …")."""
    if not turns:
        return []
    last = len(turns) - 1
    asked_text = " ".join(questions(turns[last])).lower() if asked_weight else ""
    best: dict[str, Subject] = {}
    keys: dict[str, tuple] = {}
    found = mentions(retriever, turns)
    # a drug named outright is the subject before a guess in the same turn ("Will my Medicare plan
    # cover Lipitor": "cover" read as the brand Covera at 0.65, and as "my" medicine); a misspelt
    # name in a turn of its own still counts ("Lyrcia, 75 twice a day.": Lyrica at 0.67)
    named_in = {m.turn for m in found if m.match_score >= NAMED_OUTRIGHT}
    found = [m for m in found if m.match_score >= SECOND_DRUG_MIN_MATCH or m.turn not in named_in]
    # "So what's the new one for?" names the drug marked new before (its latest such mention)
    referred = None
    mention_keys: dict[int, tuple] = {}
    if new_weight and _THE_NEW_ONE.search(turns[last]) and not any(m.turn == last and m.new for m in found):
        referred = max((m for m in found if m.new), key=lambda m: (m.turn, m.position), default=None)
    for m in found:
        # any mention of it there: "carafate … How does the carafate work?" names it twice
        asked = m.turn == last and re.search(rf"(?<!\w){re.escape(m.span)}(?!\w)", asked_text) is not None
        if m is referred:
            asked = _THE_NEW_ONE.search(asked_text) is not None
        # a medicine being started is the patient's own ("the doctor just added lisinopril"); it
        # weighs more only where the question itself brings it up ("… starting me on Mayzent. I
        # already take metoprolol — anything?") or points back to it ("the new one")
        own = m.own or (m.new and not m.third_party)
        new = m.new and (m.turn == last or m is referred)
        score = (3.0 * (m.turn == last or m is referred) + 1.0 * own - 2.0 * m.left - 1.5 * m.third_party
                 + 0.5 * (m.turn - last) + m.match_score + asked_weight * asked + new_weight * new)
        key = (-score, 0 if m.turn == last else 1, m.position if m.turn == last else -m.turn)
        subj = best.setdefault(m.drug_id, Subject(m.drug_id, score))
        subj.mentions.append(m)
        mention_keys[id(m)] = key
        if m.drug_id not in keys or key < keys[m.drug_id]:
            keys[m.drug_id], subj.score = key, score
    # A combination the user named as such ("Ciprofloxacin/Dexamethasone", a brand) is what a
    # later mention of one of its components ("dexamethasone") is about.
    for combo in list(best.values()):
        drug = retriever.drugs[combo.drug_id]
        if not drug.components or not any(m.match_score >= NAMED_OUTRIGHT for m in combo.mentions):
            continue
        parts = [best[c.drug_id] for c in best.values() if c is not combo
                 and retriever.drugs[c.drug_id].generic_name in drug.components]
        if parts:
            top = min(keys[p.drug_id] for p in parts)
            if top < keys[combo.drug_id]:
                keys[combo.drug_id] = (top[0] - 0.1, *top[1:])
                combo.score = -keys[combo.drug_id][0]
    # Its components named one by one ("levodopa carbidopa … if I take alcohol") name the
    # combination the database holds as one product (carbidopa/levodopa), ranked before its parts.
    by_generic = {retriever.drugs[d].generic_name: d for d in best if d in retriever.drugs}
    candidates = {d for d in best if d in retriever.drugs and len(retriever.drugs[d].components) >= 2}
    if len(best) >= 2 or candidates:
        candidates |= {c.drug_id for c in retriever.drugs.values() if len(c.components) >= 2
                       and sum(p in by_generic for p in c.components) >= 2}
    for combo_id in sorted(candidates):
        combo = retriever.drugs[combo_id]
        related = [combo_id, *(by_generic[p] for p in combo.components if p in by_generic)]
        # the turns that name every component: the combination is ranked by its mentions there
        together = [t for t, text in enumerate(turns)
                    if all(re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text.lower()) for p in combo.components)]
        there = [mention_keys[id(m)] for d in related if d in best for m in best[d].mentions
                 if m.turn in together and id(m) in mention_keys]
        if not there:
            continue
        top = min(there)
        subj = best.setdefault(combo_id, Subject(combo_id, 0.0))
        if subj.drug_id not in keys or keys[combo_id] >= top:
            keys[combo_id] = (top[0] - 0.1, *top[1:])
            subj.score = -keys[combo_id][0]
            subj.mentions.extend(m for d in related[1:] for m in best[d].mentions if m not in subj.mentions)
    return sorted(best.values(), key=lambda s: keys[s.drug_id])


# A second drug must be named, not guessed: a loose spelling match ("hydrocodone", a drug the
# database lacks, read as hydrocortisone at 0.63) may still find the subject of a question, never
# a drug beside it; a misspelt name ("warfarine", "wafarin", "levadopa": 0.70-0.75) still counts.
SECOND_DRUG_MIN_MATCH = 0.7


def co_named(retriever: DrugRetriever, turns: list[str], subject_id: str | None) -> list[str]:
    """Other drugs the question is about together with the subject: those named in the last turn
    and taken by the same person as the subject, never one stopped ("my wife is on warfarin, but
    I take Pradaxa … do I take it now?" is about Pradaxa alone; "my dad takes Coumadin and his
    dentist wants him on amoxicillin" is about both)."""
    if not turns or subject_id is None:
        return []
    last = len(turns) - 1
    found = [m for m in mentions(retriever, turns) if m.turn == last]
    # whose medicines are asked about: the subject's owner (the patient, or the relative whose
    # two medicines the question is about: "my dad takes Coumadin … and amoxicillin")
    owner = next((m.third_party for m in found if m.drug_id == subject_id), False)
    # the same words read as another drug ("amoxicillin" is also a part of amoxicillin/clavulanate)
    # are the subject again, not a second drug
    spans = {m.position for m in found if m.drug_id == subject_id}
    out: list[str] = []
    for m in found:
        if (m.drug_id != subject_id and m.position not in spans and m.third_party == owner and not m.left
                and m.match_score >= SECOND_DRUG_MIN_MATCH and m.drug_id not in out):
            out.append(m.drug_id)
    return out


def named_before(retriever: DrugRetriever, turns: list[str], subject_id: str | None) -> list[str]:
    """Drugs named in the earlier turns and taken by the subject's owner, neither left nor the
    subject: what "is it alright to keep taking that while I take this?" may point back to. The
    reader uses them as the second drug only when the last turn asks about an interaction."""
    if not turns or subject_id is None:
        return []
    last = len(turns) - 1
    found = mentions(retriever, turns)
    owner = next((m.third_party for m in found if m.drug_id == subject_id and m.turn == last), False)
    out: list[str] = []
    for m in found:
        if (m.turn < last and m.drug_id != subject_id and m.third_party == owner and not m.left
                and m.match_score >= SECOND_DRUG_MIN_MATCH and m.drug_id not in out):
            out.append(m.drug_id)
    return out


_SPEAKER = re.compile(r"^\s*(patient|user|患者|用户|pharmacist|assistant|doctor|药师|医生)\s*[:：]\s*", re.IGNORECASE)
_STAFF = {"pharmacist", "assistant", "doctor", "药师", "医生"}


_CONFIRMS = re.compile(r"^\W*(yes|yeah|yep|yup|yea|aye|correct|exactly|uh-huh|that's (it|the one|right|them)|"
                       r"that one|those|the same)\b", re.IGNORECASE)
_OFFERED = re.compile(r"\b(instead|could try|might try|can try|how about|what about|why not|alternatively|"
                      r"you could (take|use|have)|switch to)\b", re.IGNORECASE)
_DENIES = re.compile(r"^\W*(no|nope|nah|not|never|the other)\b", re.IGNORECASE)


def staff_named(retriever: DrugRetriever, dialogue: str) -> tuple[Mention, bool] | None:
    """(the drug the pharmacist names in the turn before the patient's last one, whether the
    patient's reply confirms it): "Is that the metformin?" — "Yes, that one. …". None when that
    turn names no drug or several, only offers one instead, or the patient says no ("No, the other one")."""
    turns = []
    for line in dialogue.splitlines():
        if line.strip():
            m = _SPEAKER.match(line)
            turns.append((bool(m and m.group(1).lower() in _STAFF), line[m.end():].strip() if m else line.strip()))
    if len(turns) < 2 or turns[-1][0] or not turns[-2][0]:
        return None
    reply = turns[-1][1]
    # "Is that the metformin?", "Those would have been anaesthetic drops, probably proparacaine." —
    # not an alternative offered ("You could try Tylenol instead.": the patient's drug is another)
    said = " ".join(x for x in sentences_of(turns[-2][1]) if not _OFFERED.search(x))
    named = [m for m in retriever.find_drugs(said) if m.score >= NAMED_OUTRIGHT] if said else []
    if len({m.drug_id for m in named}) != 1 or _DENIES.match(reply):
        return None
    m = named[0]
    # the pharmacist's words, read as said in the patient's last turn (a reply's name for it)
    return Mention(m.drug_id, -1, 0, m.span, m.score, how=f"named by the pharmacist: {m.how}"), \
        bool(_CONFIRMS.match(reply))


def user_turns(dialogue: str) -> list[str]:
    """The patient's turns of a consultation ("Patient: …" / "Pharmacist: …" lines; unlabelled
    lines count as the patient's)."""
    turns = []
    for line in dialogue.splitlines():
        if not line.strip():
            continue
        m = _SPEAKER.match(line)
        if m and m.group(1).lower() in _STAFF:
            continue
        turns.append(line[m.end():].strip() if m else line.strip())
    return turns


def subject_name(subject: Subject) -> str:
    """The name the patient used for the subject (their last mention of it)."""
    return max(subject.mentions, key=lambda m: (m.turn, m.position)).span


def repair_keywords(retriever: DrugRetriever, keywords: str, subject: Subject) -> tuple[str, str | None]:
    """The tool call's keywords with the subject drug ranked first: unchanged when the call
    already names it first, else its name put in front (and the reason why)."""
    found = retriever.find_drugs(keywords)
    if found and found[0].drug_id == subject.drug_id:
        return keywords, None
    reason = "subject drug missing from the call" if all(m.drug_id != subject.drug_id for m in found) \
        else "another drug ranked before the subject"
    return f"{subject_name(subject)} {keywords}", reason


def subject_query(subjects: list[Subject], last_turn: str) -> str:
    """The search keywords without an LLM: the subject's name (as the patient wrote it) first,
    then the patient's last turn (what is asked, and any drug asked about together with it)."""
    return f"{subject_name(subjects[0])} {last_turn}".strip() if subjects else last_turn
