from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from lxml import etree

from medground.corpus.base import BadInputError, ErrorPolicy, Reader
from medground.corpus.openstax import CnxmlTable, OpenStaxReader, iter_module_tables
from medground.corpus.readers_cnxml import inline_text
from medground.registry import create
from medground.schema import Block, GlossaryTerm, ReviewQuestion

FIXTURES = Path(__file__).parent / "fixtures" / "openstax"
BOOK = FIXTURES / "tiny-book"


@pytest.fixture(scope="module")
def docs():
    return {d.doc_id: d for d in OpenStaxReader().read(BOOK)}


def test_registered_and_protocol():
    reader = create("reader", "openstax")
    assert isinstance(reader, Reader)
    assert reader.discover(FIXTURES) == [BOOK]
    assert reader.discover(BOOK) == [BOOK]


def test_order_and_hierarchy(docs):
    assert list(docs) == ["tiny-book/m00003", "tiny-book/m00001", "tiny-book/m00002"]
    front, beta, _ = docs.values()
    assert (front.title, front.unit, front.chapter) == ("Preface", "", "")
    assert (beta.title, beta.book, beta.unit, beta.chapter) == (
        "Beta Blockers", "Tiny Pharmacology", "Body Systems", "Cardiac Drugs",
    )
    assert beta.metadata == {
        "module_id": "m00001",
        "book_slug": "tiny-book",
        "license": "http://creativecommons.org/licenses/by/4.0/",
        "toc_path": ["Body Systems", "Cardiac Drugs"],
    }
    assert beta.corpus == "openstax"
    assert beta.source_path.endswith("modules/m00001/index.cnxml")


def test_cleaned_blocks(docs):
    assert docs["tiny-book/m00001"].blocks == [
        # figure reference in parentheses, footnote and figure caption dropped
        Block("paragraph", "Beta blockers slow the heart rate."),
        # dangling "Figure 1" named, citation dropped, emphasis flattened
        Block("paragraph", "The figure shows the receptor. Propranolol blocks beta-1 and "
              "beta-2 receptors.", ("Mechanism of Action",)),
        Block("list", "- Beta-1 receptors are in the heart.\n- Beta-2 receptors are in the lungs.",
              ("Mechanism of Action", "Receptors")),
        Block("paragraph", "See for labels. Learn more at the beta blocker site.", ("Dosage",)),
        Block("table", "Table: Drug Emphasis Table: Beta Blockers\n"
              "Drug: Propranolol (Inderal); Dose: 40 mg orally twice daily\n"
              "Drug: Metoprolol; Dose: 50 mg orally daily", ("Dosage",)),
        Block("note", "Do Not Stop Abruptly\nStopping suddenly can cause rebound tachycardia.",
              ("Dosage",)),
    ]
    assert docs["tiny-book/m00003"].blocks == [Block("paragraph", "Welcome to Tiny Pharmacology.")]


def test_glossary_and_questions_kept_apart(docs):
    beta = docs["tiny-book/m00001"]
    assert beta.glossary == [
        GlossaryTerm("beta blocker", "a drug that blocks beta-adrenergic receptors")
    ]
    assert beta.review_questions == [
        ReviewQuestion("Which receptor is in the heart?", ["beta-1", "beta-2"], "A"),
        ReviewQuestion("Why are beta blockers used after a heart attack?"),
    ]
    assert "Which receptor" not in beta.text and "Goodman" not in beta.text
    nitrates = docs["tiny-book/m00002"]
    assert nitrates.review_questions == [ReviewQuestion("What do nitrates dilate?")]
    assert "What do nitrates" not in nitrates.text


def test_prototype_table_cells_keep_lines():
    tables = list(iter_module_tables(BOOK / "modules" / "m00002" / "index.cnxml"))
    assert tables == [
        CnxmlTable(
            module_id="m00002",
            caption="Drug Prototype Table: Nitroglycerin",
            title="",
            header=[],
            rows=[["Drug Class\nVasodilator\n\nMechanism of Action\nRelaxes smooth muscle",
                   "Adverse Effects\nHeadache\nHypotension"]],
            table_id="table-2",
            classes=["top-titled"],
        )
    ]
    assert tables[0].render() == (
        "Table: Drug Prototype Table: Nitroglycerin\n"
        "Drug Class: Vasodilator; Mechanism of Action: Relaxes smooth muscle; "
        "Adverse Effects: Headache, Hypotension"
    )


def _table(xml: str) -> CnxmlTable:
    from medground.corpus.readers_cnxml import parse_table

    return parse_table(etree.fromstring(xml), "m1")


def test_table_spans_and_top_title():
    t = _table(
        '<table xmlns="http://cnx.rice.edu/cnxml"><tgroup cols="3">'
        '<colspec colnum="1" colname="c1"/><colspec colnum="2" colname="c2"/>'
        '<colspec colnum="3" colname="c3"/>'
        '<thead><row><entry namest="c1" nameend="c3">Cranial Nerves</entry></row>'
        "<row><entry>Nerve</entry><entry namest=\"c2\" nameend=\"c3\">Function</entry></row>"
        "</thead><tbody>"
        '<row><entry morerows="1">I</entry><entry>smell</entry><entry>sensory</entry></row>'
        "<row><entry>taste</entry><entry>mixed</entry></row>"
        "</tbody></tgroup></table>"
    )
    assert t.title == "Cranial Nerves"
    assert t.header == ["Nerve", "Function", "Function"]
    assert t.rows == [["I", "smell", "sensory"], ["I", "taste", "mixed"]]
    assert t.render().splitlines()[0] == "Table: Cranial Nerves"


def test_inline_math_and_newline():
    el = etree.fromstring(
        '<para xmlns="http://cnx.rice.edu/cnxml" xmlns:m="http://www.w3.org/1998/Math/MathML">'
        "CO<sub>2</sub> and <m:math><m:mi>x</m:mi><m:mo>+</m:mo><m:mn>1</m:mn></m:math>"
        "<newline/>next  line</para>"
    )
    assert inline_text(el, multiline=True) == "CO2 and x+1\nnext line"


def test_bad_xml_names_file_and_line(tmp_path):
    book = tmp_path / "broken"
    (book / "modules" / "m1").mkdir(parents=True)
    (book / "collection.xml").write_text(
        '<col:collection xmlns:col="http://cnx.rice.edu/collxml" '
        'xmlns:md="http://cnx.rice.edu/mdml"><col:content>'
        '<col:module document="m1"/><col:module document="m2"/></col:content></col:collection>'
    )
    (book / "modules" / "m1" / "index.cnxml").write_text(
        '<document xmlns="http://cnx.rice.edu/cnxml">\n<title>T</title>\n<content><para>x</content>'
        "</document>"
    )
    with pytest.raises(BadInputError) as exc:
        list(OpenStaxReader().read(book))
    assert exc.value.path.endswith("m1/index.cnxml") and exc.value.where == "line 3"
    policy = ErrorPolicy(skip=True)
    assert list(OpenStaxReader().read(book, policy)) == []
    assert [p.where for p in policy.problems] == ["line 3", "module m2"]


# --- the six real books ----------------------------------------------------------------------

EXPECTED_MODULES = {
    "anatomy-physiology-2e": 198, "microbiology": 159, "psychology-2e": 105,
    "pharmacology-for-nurses": 203, "nutrition-for-nurses": 93,
    "population-health-for-nurses": 185,
}
_MARKUP = re.compile(r"<[a-zA-Z/!?]")


def test_six_real_books(shared_data):
    root = shared_data / "corpora" / "openstax"
    reader = OpenStaxReader()
    units = reader.discover(root)
    assert [u.name for u in units] == sorted(EXPECTED_MODULES)
    start = time.perf_counter()
    counts, prototype_tables, empty = {}, [], []
    for unit in units:
        docs = list(reader.read(unit))
        counts[unit.name] = len(docs)
        assert all(d.book and d.title for d in docs)
        empty += [d.doc_id for d in docs if not d.blocks]
        for d in docs:
            figure_captions, table_captions = _captions(Path(d.source_path))
            for caption in table_captions:
                assert caption in d.text  # every table is rendered in the page text
                prototype_tables += ["Drug Prototype" in caption]
            for b in d.blocks:
                assert "http" not in b.text and "www." not in b.text, (d.doc_id, b.text)
                assert not _MARKUP.search(b.text), (d.doc_id, b.text)
                assert "\x00" not in b.text and "  " not in b.text
                # summaries may repeat a caption's sentences, but a caption is never a block
                assert b.text not in figure_captions
    assert counts == EXPECTED_MODULES
    # DATA.md: ~209 (one is captioned "Drug Prototype: Valproic Acid", one "Sample ...")
    assert sum(prototype_tables) == 209
    assert empty == ["microbiology/m58948"]  # an appendix of figures only
    print(f"six books read in {time.perf_counter() - start:.1f}s")


def _captions(module: Path) -> tuple[set[str], list[str]]:
    root = etree.parse(str(module)).getroot()
    figures = {inline_text(c) for fig in root.iter("{*}figure") for c in fig.iter("{*}caption")}
    tables = [inline_text(c) for t in root.iter("{*}table") for c in t.iterfind("{*}caption")]
    return {c for c in figures if len(c) > 30}, [c for c in tables if c]
