from medground.retrieve.compress import GAP, compress
from medground.schema import Citation, Evidence


def words(text: str) -> int:
    return len(text.split())


def cit(n: int, text: str) -> Citation:
    return Citation(number=n, chunk_id=f"c{n}", book="B", chapter="C", section="S", title="T", text=text,
                    score=1.0, char_start=100, char_end=100 + len(text))


def evidence(*texts: str) -> Evidence:
    cits = [cit(i, t) for i, t in enumerate(texts, 1)]
    return Evidence(citations=cits, token_count=sum(words(f"[{c.number}] ({c.label}) {c.text}") for c in cits),
                    budget=1000)


FILLER = " ".join(f"The liver stores glycogen number {i}." for i in range(12))
KEY = "Hypokalemia increases the risk of digoxin toxicity."


def test_keeps_the_sentence_that_names_the_question_and_an_option_with_its_number():
    ev = evidence(FILLER, f"{FILLER} {KEY} {FILLER}")
    out = compress(ev, "Which electrolyte disturbance increases the risk of digoxin toxicity?",
                   {"A": "Hyperkalemia", "B": "Hypokalemia"}, budget_tokens=30, count_tokens=words)
    assert out.token_count <= 30 + 2  # separators are estimated, never far off
    texts = {c.number: c.text for c in out.citations}
    assert KEY in texts[2]  # the citation keeps its number [2]
    assert 1 not in texts  # the filler passage had nothing on the question: dropped, not renumbered
    assert out.dropped == 1
    # The span narrows to the kept sentences and stays inside the original chunk.
    c = out.citations[0]
    assert 100 <= c.char_start < c.char_end <= 100 + len(ev.citations[1].text)


def test_every_option_gets_its_best_sentence_before_the_rest():
    a = "Vitamin C deficiency causes scurvy."
    b = "Vitamin B6 prevents isoniazid neuropathy."
    ev = evidence(f"{FILLER} {a}", f"{b} {FILLER}")
    out = compress(ev, "Which vitamin prevents isoniazid neuropathy?", {"A": "Vitamin C", "B": "Vitamin B6"},
                   budget_tokens=25, count_tokens=words)
    joined = " ".join(c.text for c in out.citations)
    assert a in joined and b in joined


def test_skipped_text_is_marked_and_order_is_kept():
    text = "Digoxin slows the heart. Unrelated filler here. Digoxin toxicity causes nausea. More filler text."
    ev = evidence(text, FILLER)
    out = compress(ev, "What are signs of digoxin toxicity?", None, budget_tokens=20, count_tokens=words)
    first = out.citations[0].text
    assert first.index("slows") < first.index("nausea")
    assert GAP in first


def test_evidence_within_budget_is_returned_unchanged():
    ev = evidence("Short passage about digoxin.")
    assert compress(ev, "digoxin?", None, budget_tokens=500, count_tokens=words) is ev


def test_nothing_related_leaves_the_passages_to_the_reader():
    ev = evidence(FILLER, FILLER + " again")
    assert compress(ev, "Which enzyme does aspirin inhibit?", None, budget_tokens=10, count_tokens=words) is ev


def test_neighbor_weight_keeps_the_deciding_sentence_that_shares_no_term_with_the_question():
    # "... hypokalemia" names no question term; the sentence before it names digoxin.
    lead = "Digoxin therapy requires care."
    deciding = "Contraindications include myocarditis and hypokalemia."
    rival = "Electrolyte panels are ordered often."
    ev = evidence(f"{lead} {deciding} {FILLER}", f"{rival} {FILLER}")
    question = "Which electrolyte abnormality is a problem for digoxin therapy?"
    # Budget 19 words: one header (6) and the two digoxin sentences, not the rival's passage too.
    plain = " ".join(c.text for c in compress(ev, question, None, budget_tokens=19, count_tokens=words).citations)
    assert deciding not in plain  # it scores 0 on its own words: never chosen
    out = compress(ev, question, None, budget_tokens=19, count_tokens=words, neighbor_weight=0.5)
    assert deciding in " ".join(c.text for c in out.citations)


def test_rank_weight_prefers_the_higher_ranked_passage_on_equal_wording():
    same = "Digoxin toxicity causes nausea."
    ev = evidence(f"{FILLER} {same}", f"{same} {FILLER}")
    # Budget 14 words: one header (6) and one sentence. Passage 2 wins lexically by a hair
    # ("vomiting"); the rank prior overturns it.
    ev2 = evidence(f"{FILLER} {same}", f"Digoxin toxicity causes nausea and vomiting. {FILLER}")
    q = "What does digoxin toxicity cause, nausea or vomiting?"
    assert [c.number for c in compress(ev2, q, None, budget_tokens=14, count_tokens=words).citations] == [2]
    out = compress(ev2, q, None, budget_tokens=14, count_tokens=words, rank_weight=1.0)
    assert [c.number for c in out.citations] == [1]
    assert compress(ev, q, None, budget_tokens=14, count_tokens=words, rank_weight=1.0).citations[0].number == 1


def test_a_hyphenated_question_word_counts_once_and_noun_matches_adjective():
    # "first-line" indexes three terms; summed, they outweighed "anaphylaxis" three to one
    first_line = " ".join(f"Drug {i} is a first-line antibiotic." for i in range(4))
    key = "Epinephrine is given first for anaphylactic shock."
    ev = evidence(first_line, key)
    out = compress(ev, "What is the first-line drug for anaphylaxis?", budget_tokens=16, count_tokens=words)
    assert [c.text for c in out.citations] == [key]


def test_a_heading_line_is_kept_only_with_the_sentence_under_it():
    text = ("Salt Substitutes\nNurses should warn clients on a low-sodium diet about salt substitutes. "
            f"{FILLER}")
    q = "Why are salt substitutes dangerous for someone with kidney disease?"
    alone = compress(evidence(text), q, budget_tokens=10, count_tokens=words)
    assert alone.citations[0].text == "Salt Substitutes"  # the heading matches best and says nothing
    joined = compress(evidence(text), q, budget_tokens=25, count_tokens=words, join_headings=True)
    assert joined.citations[0].text.startswith("Salt Substitutes\nNurses should warn clients")


def test_a_free_text_question_gets_its_own_budget_when_one_is_set():
    from types import SimpleNamespace

    from medground.pipelines.base import focus
    from medground.reading.reader import ReaderSettings, Tally
    from medground.schema import Question

    related = " ".join(f"Digoxin toxicity case {i} was reported." for i in range(20))
    ev = evidence(related, f"{related} {KEY}")
    engine = SimpleNamespace(count_tokens=words)
    asked = "Which electrolyte disturbance increases the risk of digoxin toxicity?"
    mc = Question(qid="q", dataset="t", question=asked, options={"A": "Hyperkalemia", "B": "Hypokalemia"})
    free = Question(qid="f", dataset="t", question=asked)
    settings = ReaderSettings(evidence_tokens=40, freetext_evidence_tokens=80)
    assert focus(ev, mc, settings, engine, Tally()).token_count <= 42
    assert 42 < focus(ev, free, settings, engine, Tally()).token_count <= 82
    same = ReaderSettings(evidence_tokens=40)  # unset: one budget for both
    assert focus(ev, free, same, engine, Tally()).token_count <= 42


def test_an_equivalent_lets_the_plain_word_meet_the_sources_word():
    # "salt" in the question, "sodium" in the deciding sentence (corpus/lay_vocabulary.py equivalents)
    deciding = "Lithium levels follow sodium intake in the kidney."
    rival = "Keep the insulin dose steady and take it daily."
    ev = evidence(f"{rival} {FILLER}", f"{deciding} {FILLER}")
    question = "Why must a person on lithium keep salt intake steady?"
    plain = " ".join(c.text for c in compress(ev, question, None, budget_tokens=20, count_tokens=words).citations)
    assert deciding not in plain and rival in plain  # two question words each: the first passage's wins
    out = compress(ev, question, None, budget_tokens=20, count_tokens=words, equivalents={"salt": "sodium"})
    assert deciding in " ".join(c.text for c in out.citations)


def test_ranking_in_meaning_fuses_with_the_lexical_ranking():
    deciding = "Lithium is tied to sodium resorption in the kidney."
    rival = "Keep the insulin dose steady and take it daily."
    ev = evidence(f"{rival} {FILLER}", f"{deciding} {FILLER}")
    question = "Why must a person on lithium keep salt intake steady?"

    def similarity(q, sentences):  # a stand-in embedder: the deciding sentence nearest, the rival farthest
        return [0.9 if s == deciding else 0.0 if s == rival else 0.1 for s in sentences]

    plain = " ".join(c.text for c in compress(ev, question, None, budget_tokens=20, count_tokens=words).citations)
    assert deciding not in plain  # one question word against two
    out = compress(ev, question, None, budget_tokens=20, count_tokens=words, similarity=similarity)
    assert deciding in " ".join(c.text for c in out.citations)


def test_a_passage_slot_keeps_the_top_passage_from_being_dropped_whole():
    # passage 2 repeats the question's words; passage 1 (retrieval's best) says the answer once
    top = "Serum lithium is kept between 0.6 and 1.2 mEq/L at first."
    wordy = " ".join(f"Lithium for manic episodes needs blood level checks, note {i}." for i in range(8))
    ev = evidence(top, wordy)
    q = "What blood level of lithium is aimed for in manic episodes?"
    plain = compress(ev, q, budget_tokens=40, count_tokens=words)
    slotted = compress(ev, q, budget_tokens=40, count_tokens=words, passage_slots=1)
    assert [c.number for c in plain.citations] == [2]  # the premise: dropped whole by word count
    assert 1 in [c.number for c in slotted.citations] and top in slotted.citations[0].text
