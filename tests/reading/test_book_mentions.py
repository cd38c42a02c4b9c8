"""What the textbook says of a drug the database has no entry for: its sentences that name the drug
(prose only, never a flattened table), the nearest to the question offered when the LLM reads it
as answering, cited as the book's; an abstention on the database all the same."""

import numpy as np
import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.book_mentions import BookMentions, book_reply, is_prose
from medground.schema import Chunk

BOOK = "Pharmacology for Nurses"


def chunk(text: str, title: str = "Nonopioid Analgesics", book: str = BOOK) -> Chunk:
    return Chunk(chunk_id=f"c-{abs(hash(text))}", doc_id="d", corpus="openstax", source_path="m/index.cnxml",
                 text=text, title=title, book=book, chapter="Pain Response Drugs",
                 section_path=("Nursing Implications",))


DRUGS = {d.drug_id: d for d in [Drug("acetaminophen", "acetaminophen", ["Tylenol"], "Nonopioid Analgesics"),
                                Drug("metformin", "metformin", ["Glucophage"], "Biguanide"),
                                Drug("doxycycline", "doxycycline", ["Vibramycin"], "Tetracycline")]}


def test_prose_is_a_sentence_of_five_to_fifty_words_and_no_table_cells():
    assert is_prose("Avoid drinking alcohol while using acetaminophen.")
    assert not is_prose("Acetaminophen dosing.")
    assert not is_prose("Indications: Relief of nasal congestion; Drug Interactions: Metoprolol, Albuterol, Metformin.")
    assert not is_prose("Drug: Tramadol (Ultram); Routes and Dosage Ranges: Pain: Adults: 25–100 mg orally every "
                        "6 hours as needed.")


def test_the_sentences_naming_each_drug_by_any_of_its_names_in_the_book_only():
    mentions = BookMentions([
        chunk("- Avoid drinking alcohol while using acetaminophen. Clients should count every source of Tylenol "
              "they take each day. Indications: Relief of nasal congestion; Drug Interactions: Metoprolol, "
              "Albuterol, Metformin, Guaifenesin."),
        chunk("Use sunscreen while out in the sun when taking doxycycline every day.", book="Microbiology")], DRUGS)
    assert [s.text for s in mentions.of("acetaminophen")] == [
        "Avoid drinking alcohol while using acetaminophen.",
        "Clients should count every source of Tylenol they take each day."]
    assert mentions.of("metformin") == []  # only in a flattened table of another drug
    assert mentions.of("doxycycline") == []  # another book


class Embedder:
    """Bag-of-words vectors over a tiny vocabulary: enough to rank by shared words."""

    VOCAB = ["alcohol", "drinking", "beers", "source", "liver", "day"]

    def _vec(self, text):
        low = text.lower()
        v = np.array([1.0 if w in low else 0.0 for w in self.VOCAB]) + 1e-3
        return v / np.linalg.norm(v)

    def encode_queries(self, texts):
        return np.stack([self._vec(t) for t in texts])

    encode_passages = encode_queries


def test_the_nearest_sentence_the_llm_reads_as_answering_is_offered_as_the_books():
    mentions = BookMentions([chunk("Clients should count every source of acetaminophen they take each day. "
                                   "Avoid drinking alcohol while using acetaminophen.")], DRUGS)
    asked = []

    def answers(question, sentence):
        asked.append(sentence)
        return 0.9 if "alcohol" in sentence else 0.1

    found = book_reply(mentions, Embedder(), answers, "Is it ok to take Tylenol after drinking alcohol?",
                       [DRUGS["acetaminophen"]], candidates=2, answers_min=0.5, floor=0.0, near=0.0)
    text, cite = found
    assert asked[0] == "Avoid drinking alcohol while using acetaminophen."  # the nearest is checked first
    assert text == ("The textbook (Pharmacology for Nurses, Nonopioid Analgesics) says of Acetaminophen: "
                    "\u201cAvoid drinking alcohol while using acetaminophen.\u201d [1].")
    assert (cite.book, cite.chapter, cite.section, cite.text) == (
        BOOK, "Nonopioid Analgesics", "Nursing Implications", "Avoid drinking alcohol while using acetaminophen.")
    # read as not answering: nothing offered
    assert book_reply(mentions, Embedder(), lambda q, s: 0.2, "Is it ok after drinking alcohol?",
                      [DRUGS["acetaminophen"]], candidates=2, answers_min=0.5, floor=0.0, near=0.0) is None
    # no books ingested, or no LLM: nothing offered
    assert book_reply(None, Embedder(), answers, "?", [DRUGS["acetaminophen"]], candidates=2,
                      answers_min=0.5, floor=0.0, near=0.0) is None


@pytest.fixture(scope="module")
def reader(reader_over):
    catalog = DrugCatalog([DRUGS["acetaminophen"]],
                          [DrugAttribute("acetaminophen", A.DOSAGE, "650 mg orally every 4-6 hours.",
                                         "openstax-dosage-table:m00273#table-00001")])
    mentions = BookMentions([chunk("Avoid drinking alcohol while using acetaminophen.")], DRUGS)
    return reader_over(catalog, book_mentions=lambda: mentions, book_check=lambda q, s: 0.9)


def test_the_reply_abstains_on_the_database_and_offers_the_books_sentence(reader):
    r = reader.reply(["Is it safe to take Tylenol after a few beers last night?"], "acetaminophen")
    assert r.outcome == "insufficient_evidence"
    assert r.text.startswith("The medicine database has no entry on its interactions for Acetaminophen")
    assert "\u201cAvoid drinking alcohol while using acetaminophen.\u201d [1]" in r.text
    assert r.citations[0].book == BOOK and r.text.endswith("A pharmacist or the package leaflet can answer this.")
