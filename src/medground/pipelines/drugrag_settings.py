"""The `drugrag` pipeline's settings (pipelines/drugrag.py), apart from the pipeline itself."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.reading.consult_settings import ConsultReplySettings
from medground.retrieve.drug_subject import ASKED_WEIGHT, NEW_WEIGHT

# The medicine database as the only retriever; long label sections are cut at a sentence.
DRUG_RETRIEVE = {"retrievers": ["drugs"], "fusion": None, "top": 10, "final_k": 4, "budget_tokens": 1200,
                 "overflow": "truncate"}


class DrugRagSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # "auto": the OpenAI tools request (llama.cpp: schema-enforced, see llm/toolcalls.py; vLLM /
    # hosted models: their own tool calling), falling back to a JSON-schema prompt when the
    # server answers without tool_calls; "schema" skips straight to that prompt.
    tool_mode: Literal["auto", "native", "schema"] = "auto"
    distill_max_tokens: int = Field(64, ge=8)
    # "reply": the subject drug's entry chosen by question type and item match, answered by a
    # deterministic reply (reading/consult.py; no LLM call); "extractive" quotes the entry the
    # LLM support pass chose; "generate" lets the LLM write.
    answer: Literal["reply", "extractive", "generate"] = "extractive"
    reply: ConsultReplySettings = Field(default_factory=ConsultReplySettings)
    # Support = 1 - P(no entry answers); below this the pipeline abstains. None = never abstain
    # (except when the database matched nothing). 0.537: fitted on the development half of
    # benchmarks/reader.py's drug-record questions with the 1.5B model (refit for another model).
    abstain_below: float | None = Field(0.537, ge=0.0, le=1.0)
    # The patient's asking sentence names something specific ("potassium salt substitutes") that
    # the supporting entry never mentions: quote another retrieved entry that does, else abstain
    # naming what no entry mentions (reading/addressing.unaddressed_terms; benchmarks/consult_abstain.py).
    address_check: bool = True
    # ... for the entries that list things (a list without the asked item reads as "not among
    # them", which is a claim); an entry of another kind (a dose, an indication) is quoted as is.
    address_check_types: list[str] = ["interactions", "adverse_reactions", "contraindications", "warnings",
                                      "boxed_warning"]
    quote_tokens: int = Field(120, ge=16, description="extractive: tokens of quoted record text")
    # The drugs the patient named (retrieve/drug_subject.py), the likely subject first, are given
    # to the distiller as candidates, and a call that drops the subject or ranks another drug
    # first gets the subject's name put in front: a small model forgets a brand named turns ago.
    candidates: bool = True
    # A drug named in the last turn's question sentences weighs this much more as the subject than
    # one named only in the context around them (retrieve/drug_subject.resolve_subjects): "Dr gave
    # me carafate along with my omeprazole. How does the carafate work?" is about sucralfate.
    # Session 29, dev: 3 of 606 replies gained (apart3), 0 lost; 0 turns it off.
    asked_subject_weight: float = Field(ASKED_WEIGHT, ge=0.0)
    # The pharmacist asks about a drug ("Is that the metformin?") and the patient says yes ("Yes,
    # that one. …"), or names none and does not say no: that drug is the subject, instead of
    # "Which medicine do you mean?" (found by session 33's probes; retrieve/drug_subject.staff_named).
    staff_named_subject: bool = True
    # A medicine being started or just added weighs this much more as the subject ("My nurse is
    # starting me on Mayzent. I already take metoprolol — anything I should know?" is about Mayzent,
    # metoprolol read beside it); 0 turns it off. Session 34.
    new_subject_weight: float = Field(NEW_WEIGHT, ge=0.0)
    # A word the consumer-health sources pair with another name (a condition: "pre-eclampsia") is
    # never reported as a drug the database lacks (found on apart8 after its last read). Session 34.
    unknown_skips_known_words: bool = True
    # A word of the patient's that looks like a medicine the database lacks ("Janewvia", "Valtrex")
    # is reported as such, with the nearest names, when the only drugs recognised were met through
    # one word of a longer name ("sugar" of mannitol's "manna sugar", "shingles" of "shingles
    # vaccine"): a reply about mannitol to a Januvia user answers a question nobody asked. Session 38.
    unknown_beats_partial: bool = True
    # "tool_call": the LLM distills the consultation into search_engine(keywords) (RagPULSE).
    # "subject": when a drug the patient named is recognised, the keywords are its name + the
    # last turn, no LLM call (measured better on the multi-turn set: benchmarks/consult.py);
    # the tool call remains the fallback when no drug is recognised.
    query: Literal["tool_call", "subject"] = "tool_call"
    # A consultation longer than this (tokens) loses its oldest turns first; how many is reported.
    max_dialogue_tokens: int = Field(1500, ge=64)
