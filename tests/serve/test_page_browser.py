"""The consultation page in a real browser (Debian's Chromium driven by Playwright; no browser
download): ask a question, see the answer beside its evidence; a failed consultation shows its
error and keeps it on screen. The pipelines are fakes: this tests the page, not the model."""

from __future__ import annotations

import shutil
import time

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from medground.schema import Answer, Citation, Query, Question  # noqa: E402
from medground.serve.api import ServeSettings, create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (apt-get install chromium)")

EVIDENCE = Citation(number=1, chunk_id="c1", book="Pharmacology for Nurses", chapter="Cardiac Drugs",
                    section="Digoxin", title="Digoxin",
                    text="Hypokalemia increases the risk of digoxin toxicity.", score=1.0)


class PagePipe:
    def __init__(self, cfg):
        self.cfg = cfg
        self.engine = None

    def answer(self, q: Question) -> Answer:
        if self.cfg.pipeline == "drugrag":
            raise RuntimeError("the medicine database is not built")
        return Answer(outcome="answered", choice="B", option_scores={"A": 0.1, "B": 0.9}, citations=[EVIDENCE],
                      queries=[Query(q.question, "original")],
                      timings={"retrieve": 0.5, "read": 1.5, "total": 2.0})


@pytest.fixture(scope="module")
def server(serve_app):
    return f"http://127.0.0.1:{serve_app(create_app(ServeSettings(), build=PagePipe))}"


@pytest.fixture(scope="module")
def page():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        p = browser.new_page()
        errors: list[str] = []
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        p.errors = errors
        yield p
        browser.close()


def test_ask_shows_the_answer_beside_its_evidence(server, page):
    page.goto(server + "/")
    page.click("#tab-ask")
    page.fill("#question", "Which electrolyte disturbance increases the risk of digoxin toxicity?")
    page.fill("#options", "A. Hyperkalemia\nB. Hypokalemia")
    page.click("#ask")
    page.wait_for_selector("#ask-answer .turn")
    assert page.inner_text("#ask-answer .turn") == "B. Hypokalemia"
    assert "2.0 s" in page.inner_text("#ask-answer")  # the total, not stages added to it
    evidence = page.inner_text("#evidence")
    assert "[1]" in evidence and "Hypokalemia increases the risk of digoxin toxicity." in evidence
    assert "Pharmacology for Nurses / Cardiac Drugs / Digoxin" in evidence
    # The Content-Security-Policy lets the page's own script and style run and nothing else.
    assert not page.errors, page.errors


def test_a_failed_consultation_shows_its_error_and_keeps_it(server, page):
    page.goto(server + "/")
    page.fill("#message", "I take warfarin. Can I eat spinach?")
    page.click("#send")
    page.wait_for_selector("#log .error")
    time.sleep(0.3)  # the old page drew the error, then erased it
    log = page.inner_text("#log")
    # the failure's kind, not its text (which may hold paths): that stays in the server's log
    assert "Error: pipeline 'consult' failed" in log and "RuntimeError" in log and "not built" not in log
    assert page.input_value("#message") == "I take warfarin. Can I eat spinach?"  # the message is given back
