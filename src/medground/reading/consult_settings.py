"""The consultation reply's settings: weights and switches fitted on the development sets only
(benchmarks/consult_e2e.py fit → consult.json e2e_fit); the reader is reading/consult.py."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.drug_schema import AttributeType

A = AttributeType
# Entries whose items are conditions and effects, the patient's lay words for which MiniLM misses.
# Not interactions (drug names: matched by name, generic and class, which the check cannot see
# when the other drug was named turns earlier) nor indications (what the patient mentions in
# passing, "for my hair loss", is not what they ask).
CHECKED_TYPES = frozenset({A.ADVERSE_REACTIONS, A.CONTRAINDICATIONS, A.WARNINGS, A.BOXED_WARNING})
# Entries whose items a patient's symptom, condition, food or other medicine can be: the only ones
# the LLM's medical terms for what the patient describes are matched against (asked what a drug
# is for or what is in it, the 1.5B still names the condition treated or the drug's class).
TERM_TYPES = CHECKED_TYPES | {A.INTERACTIONS}
# Entries whose label lines' titles ("Arthralgia: Severe and disabling …") are matched on their own.
TITLED_TYPES = TERM_TYPES - {A.ADVERSE_REACTIONS}


class ConsultReplySettings(BaseModel):
    """Defaults fitted on the development sets (benchmarks/consult_e2e.py fit → consult.json e2e_fit)."""

    model_config = ConfigDict(extra="forbid")

    item_weight: float = Field(4.0, ge=0.0, description="weight of the best item match against log P(type)")
    item_floor: float = Field(0.3, ge=0.0, le=1.0, description="item similarity below which it earns nothing")
    match_at: float = Field(0.65, ge=0.0, le=1.0, description="similarity at which an item is what was asked")
    # 0.4 until session 31; the word-gram typer is surer of "none" and, on the development sets,
    # 0.3 declines 3 more unanswerable questions (167 of 183) and no answerable one more (0.2: 168)
    none_above: float = Field(0.3, ge=0.0, le=1.0, description="P(no entry answers) above which to abstain")
    elsewhere_above: float = Field(0.6, ge=0.0, le=1.01,
                                   description="abstain when the top type is one the drug lacks and the types it "
                                               "lacks hold this much probability (1.01: never)")
    max_items: int = Field(3, ge=1)
    earlier_turn_weight: float = Field(0.8, ge=0.0, le=1.0,
                                       description="similarity factor for phrases of earlier patient turns")
    lay_glosses: bool = Field(True, description="match items through their MedlinePlus lay gloss too")
    # A clinical item ("Angioedema") is also matched through the plain phrases consumer-health
    # pages pair it with ("swelling"; corpus/lay_vocabulary.py); 0: off.
    lay_synonyms: int = Field(2, ge=0, le=5, description="mined plain phrases matched per clinical item")
    plain_share: float = Field(0.01, gt=0.0, le=1.0,
                               description="an item is clinical when it holds a word under this share of "
                                           "MedlinePlus summaries use")
    # The LLM as a verifier over the few best entries: "which entry answers?" in one forward pass;
    # its log-probability is added with this weight (0: no LLM call at all).
    verify_weight: float = Field(0.0, ge=0.0)
    verify_candidates: int = Field(4, ge=2)
    verify_chars: int = Field(300, ge=40, description="characters of each entry the verifier reads")
    prose_quote: int = Field(2, ge=1, description="sentences quoted from a prose entry (a label section)")
    # An FDA label section's scaffolding — headings, the reporting boilerplate, a table's caption,
    # header and count rows, its MedDRA organ-class rows — is no item a patient's words should meet
    # ("like ages" met Belsomra's "Mean Age (years)"); reading/label_items.py. Session 34.
    # A drug the book gives only a dose for (339 of 738: sertraline, simvastatin, acetaminophen …),
    # asked about a kind of entry it lacks: after "no entry on its interactions for Simvastatin",
    # what the book's prototype of its class lists, as the prototype's (reading/class_prototype.py).
    # The outcome stays an abstention. Session 35.
    class_prototype: bool = Field(True, description="where the drug lacks the asked entry, add what the "
                                  "prototype of its class in the book lists")
    # What the textbook says of the drug, where it lacks the asked entry: the sentence naming it
    # nearest the question that the LLM reads as answering (the textbook reader's quote check,
    # fitted in session 26 at 0.5), cited as the book's (reading/book_mentions.py). Needs the
    # ingested books; the outcome stays an abstention. Session 35.
    book_sentences: bool = Field(True, description="where the drug lacks the asked entry, offer the textbook "
                                 "sentence that names it and answers")
    book_candidates: int = Field(2, ge=1, description="nearest textbook sentences the LLM checks")
    book_answers_min: float = Field(0.5, ge=0.0, le=1.0, description="P(the sentence answers) to offer it")
    label_scaffolding: bool = Field(True, description="leave an FDA label section's headings, boilerplate and "
                                    "table header rows out of its items")
    max_entry_items: int = Field(60, ge=1, description="items of one entry matched (a label section's first lines)")
    quote_chars: int = Field(320, ge=40, description="a quoted line is cut to its opening sentences within this")
    # A word of the patient's that is rare in the database and stands in an item ("spinach" in
    # "Foods that contain vitamin K (e.g., spinach, kale, broccoli)") matches it at this similarity;
    # rare = in under ``rare_share`` of all entries (so "pain" or "dose" never match this way).
    lexical_match: float = Field(0.9, ge=0.0, le=1.0)
    rare_share: float = Field(0.005, gt=0.0, le=1.0)
    # The rare-word match reads a side-effects entry's list items; a label's prose sentence there
    # longer than this many words is about its studies ("The bleeding profile of BRILINTA …
    # concomitant therapy, stent, and medical history …" met "after my stent") and is matched in
    # meaning only. A warnings entry's sentences are the warnings ("Alcohol may increase levels of
    # hepatic fat …"): always read. None: every item. Session 37, dev: 3 of 849 replies changed, each
    # first sentence without a study's words ("Yes — Dyspnea is listed …"), no score moved.
    rare_item_words: int | None = Field(25, ge=1, description="longest side-effects item (in words) the "
                                        "rare-word match reads")
    # A rare word the patient says in passing ("tested positive for covid", "to quit smoking")
    # names what the drug is for, not what is asked: indications are matched in meaning only.
    rare_in_indications: bool = Field(False, description="let the rare-word match reach indications items")
    # Where the rare words come from: the whole last turn, or its question sentences only (keeps
    # "… started Latuda for bipolar depression." out, but loses "now my pee is bright orange. Is
    # that from the pills?"; dev: one written reply gained, one lost — docs/benchmarks.md, session 19).
    rare_from: Literal["turn", "question"] = "turn"
    # Which of the patient's words may meet the subject's entries that say what it is for (its
    # indications and therapeutic effects): the whole conversation, or the last turn's question
    # sentences only. Why the patient takes it, told before the question ("Remeron at night for
    # depression … Is the pill making me this hungry?"; "Wegovy for weight loss!! … how often do
    # I inject it?"), names such an item exactly and outweighed what was asked. A one-sentence turn
    # is read whole. Session 29, dev: indications 5 of 606 replies gained, therapeutic effects 2
    # more, 0 lost.
    purpose_entries_from: Literal["turn", "question"] = "question"
    # A yes/no question whose best item is only near what was said (under ``match_at``): from
    # ``hedge_at`` the nearest item is named as a hedge ("ankles puffed up" → "Peripheral edema",
    # 0.52); below it the reply says the entry does not list it in those words and shows the list
    # (coffee → "Irritability", 0.37, named nothing the patient asked). Fitted on the development
    # sets' 18 hedged replies (docs/benchmarks.md, session 19); 1.01: never hedge.
    hedge_at: float = Field(0.45, ge=0.0, le=1.01, description="similarity from which the nearest item is named")
    max_listed: int = Field(12, ge=1, description="items named when a list is shown whole (the rest are counted)")
    short_item: int = Field(80, ge=1, description="a line-per-item entry whose items are all at most this many "
                                                  "characters is a list, however long; else a label section")
    # What the typer reads: the whole last turn, its question sentences only (the typer learned
    # from one-sentence questions; context around the question — "Yes, 10 mg a day." — pulls it
    # towards dosage), or the mean of both distributions.
    typer_reads: Literal["turn", "question", "both"] = "turn"
    # Two drugs named in the last turn: "together" reads the question as one about taking them
    # together (interactions at least as likely as the typer's top type); "typer" leaves it to the
    # typer, which reads both names as "this medicine" and, trained on the written bank's
    # comparisons, tells "is it just an antacid like tums?" from "can I take it with tums?".
    # Session 29, dev with the bank typer: 2 Medication QA replies gained, 0 lost, all else unchanged.
    named_pair_reads: Literal["together", "typer"] = "typer"
    # The typer's model (reading/consult_typer.py; a .npz written by `consult_e2e.py typer --out`):
    # empty, the shipped one.
    typer_model: str | None = Field(None, description="path of the consultation typer's model (.npz)")
    # A question that only ties what the patient described to the medicine ("my ankles are
    # swollen. Is that the lisinopril?") is read by the typer as "Can this medicine cause this:
    # my ankles are swollen?" (consult_reframe.attribution_question); the bare form reads as a
    # question about the drug's class or the pill's looks. Session 27: dev 0 of 506 replies changed;
    # 30 helper-written own-words questions of this shape, 2 gained, 0 lost (docs/benchmarks.md).
    # Why the patient takes the subject ("put me on HCTZ for blood pressure and now I have gout"):
    # the phrases of the words after "for" right after its name, unless said again outside it
    # (consult_text.purpose_phrases), never meet its side effects — "blood pressure" was "Yes —
    # Hypotension is listed" — and are neither a condition nor a substance for the condition
    # reading. Other entries keep them: a warning may name the use ("… atrial fibrillation").
    purpose_not_effect: bool = Field(True, description="a stated purpose never meets the subject's side effects "
                                     "or its interactions (session 31)")
    # Two different substances of the database (words of its generic names: "potassium",
    # "lithium", "calcium") are never one thing: a match between them is neither an answer nor
    # the closest item offered ("potassium pills" beside lisinopril was "closest … Lithium").
    substances_apart: bool = Field(True, description="a substance the patient names never matches another")
    # The typer reads the turn without the purposes its context sentences state
    # (consult_text.without_purpose): "I'm pregnant. I've been taking atorvastatin for
    # cholesterol. Is it safe to keep taking it?" read as a question about what it is for. Off
    # since a helper's "I take it for lupus. My aunt takes it for RA. How can one drug treat
    # both?" lost its question (session 27; test 1 gained, 1 lost before that).
    typer_skips_purpose: bool = Field(False, description="the typer reads no stated purpose outside the question")
    # The drug record answers what it holds (reading/record_facts.py): two of its names asked to be
    # one medicine ("Is Norvasc the same as amlodipine?") — and, with ``record_class``, where it
    # would abstain on a class question, its class ("Is Zoloft an SSRI?"). Session 27, dev: the
    # names 1 of 506 replies changed; the class 18 more, about 11 "what is xanax" answered well and
    # 7 misfires ("what can take the place of tramadol" → its class), so it is off.
    record_facts: bool = Field(True, description="answer whether two names are one medicine from the drug record")
    record_class: bool = Field(False, description="where it would abstain on a class question, the record's class")
    typer_attribution: bool = Field(True, description="type a bare 'is that from the pill?' as the question it asks")
    # A question that only asks whether what the patient said before bears on the medicine ("I had
    # one fit years ago. Does that matter?", "… Does that rule it out?") is read by the typer as "Is
    # this medicine safe with this: <what was said>?" (consult_reframe.bearing_question): a condition
    # then reads as contraindications, a substance as interactions; the bare form reads as anything.
    # Session 33, with safety_as_one: dev 2 of 728 replies gained, 0 lost.
    typer_bearing: bool = Field(True, description="type a bare 'does that matter?' as the question it asks")
    # The LLM as a judge of meaning for the closest items: "does the patient describe <item>?"
    # (one token, yes/no log-probabilities). MiniLM puts "loose stools" at 0.35 from "diarrhea";
    # the LLM knows they are one thing. An item it affirms (P(yes) > P(no)) counts as matched at
    # P(yes); one it denies earns nothing. 0: no LLM call.
    item_check: int = Field(0, ge=0, description="closest list items the LLM checks against the patient's words")
    item_check_floor: float = Field(0.3, ge=0.0, le=1.0,
                                    description="items less similar than this are never checked")
    item_check_chars: int = Field(400, ge=40, description="characters of the patient's last turn the check reads")
    # "Can I take lisinopril while pregnant?" reads as an interactions question to the typer; when
    # no second substance is named and a phrase of the patient's is nearest a condition item of
    # the database (reading/patient_condition.py) the question is about
    # the entries that say when the medicine must not be used or needs care. >1: never.
    condition_similarity: float = Field(0.6, ge=0.0, le=1.01,
                                        description="similarity to the nearest condition item at which a "
                                                    "phrase names a condition")
    # Which typed questions the reading acts on: "interactions" (the typer's reading of "can I take
    # it while pregnant?"), "safety" — interactions, indications, contraindications, warnings
    # ("I have epilepsy … is Zyban something I'm allowed to take?" reads as indications), where
    # every entry's items are then matched against the condition alone — or "listed": as safety,
    # but beyond the interactions reading only a condition the drug's own contraindications or
    # warnings list at ``match_at`` ("Is Haldol okay for someone with Parkinson's?"). Dev, session
    # 22: listed 3 replies gained, 0 lost of 506; safety 5 lost on the old sets (docs/benchmarks.md).
    # "any_listed": the record test whatever the typer's reading (a variant: 1 of 506 changed).
    condition_reads: Literal["interactions", "safety", "listed", "any_listed"] = "listed"
    # "safety": the LLM confirms a condition read from a question the typer did not read as an
    # interactions one ("is the patient asking whether X is safe for them because of <condition>?")
    condition_check: bool = False
    # A patient's misspelt word is also matched as the database's word ("pregnent" → pregnant,
    # "glacoma" → glaucoma; reading/spelling.py). Dev, session 22: 1 gained, 0 lost of 506.
    spelling: bool = True
    # The LLM names what the patient describes in standard medical terms ("I keep getting the runs"
    # → "diarrhea"; "I just found out I'm expecting" → "pregnancy"): LLM-AMT's rewrite into
    # medical terminology, here as extra phrases matched against the entries' items, for lay words
    # that neither MiniLM nor the mined lay vocabulary links to the record's. "unmatched": only
    # when no item of the chosen entry matched at ``match_at`` and the question reads as one about
    # effects, conditions or other substances (``TERM_TYPES``), whose entries alone the terms are
    # matched against (the reply is chosen again with them); "off": no LLM call.
    clinical_terms: Literal["off", "unmatched"] = "off"
    # A compound of the patient's that shares its head with an item under another modifier
    # ("cranberry juice" / "Grapefruit juice", "chest pain" / myalgia's "muscle pain";
    # reading/siblings.py) names a different thing: an item of ``TERM_TYPES`` matched under this
    # similarity is then not what was asked (the reply says the entry lists the sibling, not the
    # patient's thing); from it, a near-synonym ("stomach ulcer" / "Gastric ulcer", 0.88). 0: off.
    sibling_until: float = Field(0.8, ge=0.0, le=1.01,
                                 description="an item matched under this similarity is not what a sibling compound names")
    # The two modifiers must be of one kind ("cranberry"/"grapefruit" 0.44, "chest"/"muscle" 0.48,
    # "psoriatic"/"rheumatoid" 0.37), which a verb or a degree word before the head is not
    # ("got"/"uncontrolled" 0.23, "deep"/"skeletal" 0.31, "severe"/"muscle" 0.31). Set from those
    # word pairs, written for the purpose, none from a question set.
    # A word the patient says only as the modifier of a compound ("drink" and "orange" of "drink
    # orange juice"; reading/siblings.py), matched alone to an item of ``TERM_TYPES`` under
    # ``sibling_until``: "near" — the match weighs in the entry's choice but is not called what
    # was asked (the reply hedges); "on" — a match like any other.
    modifiers_alone: Literal["on", "near"] = "near"
    sibling_kin: float = Field(0.35, ge=0.0, le=1.0, description="MiniLM similarity of two modifiers of one kind")
    # A medicine named by what it is ("a water pill for her swollen legs") that meets an item of
    # the subject's interactions ("Diuretics", through its plain names) is a second drug asked
    # about with the subject (reading/described.py); off: such words only say which medicine.
    described_medicines: bool = True
    # A list item that names its members in parentheses ("Foods high in tyramine (milk, …, aged
    # cheeses, …)", "CNS depressants (antihistamines, kava, valerian)") is also matched through each
    # member: a patient's "aged cheddar" meets "aged cheeses", not a blend of eleven foods. The
    # reply names the whole item (consult_types.distinct).
    item_members: bool = Field(True, description="match a list item through the members its parentheses name")
    # A part of an item ("Cramping" of "Cramping/diarrhea", "Arthralgia" of a label's "Arthralgia:
    # Severe and disabling arthralgia has been reported …") is named, and the whole item quoted: a
    # patient's calf cramps read that the source's cramping comes with diarrhea.
    whole_items: bool = Field(True, description="a reply matched through part of an item quotes the whole item")
    # The first sentence names the matched items of at most ``short_item`` characters (or else the
    # first one); the long ones (a label's sentences) are quoted after it. Session 38, dev: 7 of 849
    # replies changed, rubric 2 lost (the words the writers asked about sat in the long items), and
    # Clomid's "Visual symptoms (blurred vision, …)" (88 characters) left out of a first sentence
    # about flashes in the eyes — off.
    first_names_short: bool = Field(False, description="the first sentence names the short matched items only")
    # A sentence item (an FDA label's "Dietary fiber may bind to levothyroxine sodium and decrease its
    # absorption", 0.50 from "a fibre supplement") also matched through its runs of two or three
    # adjacent content words (consult_text.sentence_phrases), as the patient's words are. Session 36,
    # dev: 62 of 849 replies changed, drug + attribute 2 gained / 1 lost, rubric 2 / 3; a label's
    # study sentences then answer ("The safety of a 15-minute loading dose …" for bumping into doors) — off.
    item_phrases: bool = Field(False, description="match a sentence item through its runs of content words")
    # Two drugs asked about together and neither interactions entry names the other: a warnings
    # sentence of either that names the other drug or its class ("Concomitant use of drugs
    # affecting hemostasis … nonsteroidal anti-inflammatory drugs (NSAIDs)" in Eliquis's label,
    # asked about Aleve) is an answer to the interaction question, weighed as one. Session 30:
    # dev 0 of 608 replies changed (no dev consultation asks this), test read once.
    partner_warnings: bool = Field(True, description="read a warnings sentence naming the other drug as its interaction")
    # An item's abbreviations spelled out as the books define them ("CABG surgery" → "CABG (coronary
    # artery bypass graft) surgery"), matched as the item's second row where it has no lay gloss.
    spell_abbreviations: bool = Field(True, description="also match an item with the abbreviations the books "
                                      "define spelled out (corpus/abbreviations.py)")
    # Contraindications and cautions answer one question — is it safe for me, given this? — that the
    # typer cannot split (the books' prototype tables hold "Caution" lines in their Contraindications
    # row; the database files them as warnings). When the one chosen names nothing near what the
    # patient said (best item under ``hedge_at``) and the other's best item is at least that near,
    # the other answers: "heart bypass operation" meets Celebrex's contraindication "CABG surgery"
    # although the typer put 0.86 on warnings.
    safety_siblings: bool = Field(True, description="a contraindications or warnings entry that names nothing said "
                                  "yields to the other one when that one names it (session 32)")
    # The same between side effects and warnings: an FDA label files its serious reactions under
    # warnings ("severe and disabling arthralgia" for sore knees on Tradjenta, whose side-effect
    # entry lists rash and cough). Session 33, dev: 3 of 728 replies lost, 0 gained — off.
    effects_siblings: bool = Field(False, description="a side-effects or warnings entry that names nothing said "
                                   "yields to the other one when that one names it")
    # A side-effects entry yields to the warnings when their best item names what the last turn
    # said (at ``match_at``, not through the drug's purpose or another drug's class) this much
    # nearer (consult_types.better_effect_first): painful knees on Nesina are its warnings'
    # "Arthralgia: …" (0.66), not its side effects' "Headache" (0.53). None: never. Session 38: dev
    # drug + attribute 3 gained / 0 lost of 849; test, read once, 1 lost of 327 (the same fact
    # quoted from the warnings where the writer's item sits in the side effects).
    effects_sibling_margin: float | None = Field(0.1, ge=0.0, le=1.0,
                                                 description="how much nearer the other of side effects and "
                                                 "warnings must name what was said to answer instead")
    # An entry of the subject whose item names what the question is about (at ``match_at``, through
    # the words of its question sentences, or of the sentence a bare "Could that be it?" points back
    # at: consult_reframe.asking_part) answers before the chosen one when that names nothing near
    # (under ``hedge_at``): "a big coffee drinker … Could that be it?" on theophylline is its
    # interactions' "Caffeine", not its side effects; "Do I really have to skip the cheese??" on Nardil
    # its "Foods high in tyramine (…)", not its dose (consult_types.matched_entry_first). Session 36,
    # dev: "interactions" 2 of 849 gained, 1 lost (a garbled dose question); "any" 3 gained, 18 lost
    # (a what-is-it-for or dose question answered by a side effect the patient named).
    matched_first: Literal["off", "any", "interactions"] = Field(
        "interactions",
        description="an entry whose item names what was asked answers before one naming nothing near it")
    # A reply from how the drug works or from what it does also gives the other, cited as its own
    # entry ("What does Plavix actually do?": the typer reads Medication QA's "Action", how it works;
    # the writers of the sets written apart mean its therapeutic effects). The first citation, which
    # the judge reads, is unchanged.
    effects_with_mechanism: bool = Field(True, description="a reply from mechanism or therapeutic effects also "
                                         "gives the other entry")
    # "… which one is doing this?" with two or three of the patient's medicines named: each is read
    # alone and the one whose side effects or warnings name what was described answers
    # (reading/consult_which.py). Session 37.
    which_medicine: bool = Field(True, description="a question asking which of the patient's medicines is "
                                 "behind what they described is answered by the one whose entry names it")
    # The asked kind of entry is missing (the typer reads "Stendra + a few beers" as an interactions
    # question; an FDA label holds only side effects, warnings and a boxed warning) but the best
    # entry's best item is at least ``hedge_at`` near what was said ("5.7 Alcohol", 0.53): answer from
    # it as a hedge instead of saying no entry covers the kind asked.
    # A child's age the patient gives ("my 9 year old", "my daughter is 6") meets a contraindications
    # or warnings item whose age limit takes it in ("Children under age 12 (extended-release
    # preparations)") at ``lexical_match`` (reading/ages.py): an embedding cannot compare numbers.
    # Session 33: dev 1 of 728 replies gained, 1 more a firmer right reply, 0 lost.
    child_age_items: bool = Field(True, description="a child's stated age meets the items whose age limit takes it in")
    # A record holding only one of contraindications and warnings (an FDA label has warnings only)
    # answers a question typed as the other from it when no item matched (consult_types.safety_stand_in):
    # "I had a fit years ago. Does that matter?" on Ampyra is its warnings' "contraindicated in … seizures".
    # Session 33: with typer_bearing, dev 2 of 728 replies gained (Pradaxa, Ampyra), 0 lost.
    safety_as_one: bool = Field(True, description="a question typed contraindications reads the warnings when "
                                "the record has no contraindications entry, and the reverse")
    # "Should I be worried taking both?" (consult_reframe.asks_about_both): the drug of an earlier turn
    # is read beside the subject, as a question about the two together, whatever the typer's top kind
    # (before, only an interactions reading brought it in). Session 34.
    both_reads_together: bool = Field(True, description="a question about taking 'both' / 'together' reads "
                                      "the earlier turns' drug beside the subject")
    # Another named drug's interactions entry answers only about the subject: it is matched against
    # the subject's name and class, not the patient's other words (on Zetia, "safe with grapefruit?"
    # was answered from Lipitor's "Grapefruit juice"; a helper's probe). Session 34.
    partner_reads_subject: bool = Field(True, description="another named drug's entries are matched against "
                                        "the subject's name and class only")
    lacking_kind_near: bool = Field(False, description="a near item answers when the asked kind of entry is "
                                    "missing (session 32, measured)")
    clinical_terms_max: int = Field(3, ge=1, le=8, description="terms kept from the LLM's list")
    clinical_terms_chars: int = Field(600, ge=40, description="characters of the patient's turns (the last ones) it reads")
