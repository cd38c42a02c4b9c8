"""The LLM query configurations of `python benchmarks/consult.py retrieval --llm`.

  plain JSON query (paper)   RagPULSE-style instruction: summarise the consultation as a search
                             query, answered as JSON {"query": ...} (schema-constrained).
  tool calling               drugrag's distill step, search_engine(keywords), no candidates.
  tool calling + candidates  the same with the recognised drugs named to the model (likely
  + repair (drugrag)         subject first) and the call repaired when it drops or demotes the
                             subject: what drugrag.yaml runs.
Each dialogue's keywords go to DrugRetriever.search. "instruction-follow" = the model's answer
parsed into a query (schema-valid JSON or a valid tool call); failures fall back to the whole
dialogue and are counted.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PLAIN_JSON = ("You help a pharmacist search a medicine database. Read the consultation and write the search "
              "query that finds the answer to the patient's last question: the drug name and what is asked. "
              'Reply with JSON only: {"query": "..."}')


class PlainQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=120)


def llm_configs(args, retriever, keyed) -> dict:
    from medground.llm.structured import generate_json
    from medground.pipelines.base import Tally
    from medground.pipelines.drugrag import DRUG_RETRIEVE, DrugRagPipeline, DrugRagSettings
    from medground.retrieve.drugs import DrugPassageRetriever
    from medground.retrieve.engine import RetrievalEngine
    from reader import make_llm

    llm = make_llm(args.model, args.threads)
    engine = RetrievalEngine(DRUG_RETRIEVE, retrievers={"drugs": DrugPassageRetriever(retriever)})
    follow: dict[str, list[bool]] = {}

    def dialogue_text(d) -> str:
        return "\n".join(f"Patient: {t}" for t in d.turns)

    def plain(d):
        msgs = [{"role": "system", "content": PLAIN_JSON},
                {"role": "user", "content": f"Consultation:\n{dialogue_text(d)}"}]
        out = generate_json(llm, msgs, PlainQuery, max_tokens=64)
        follow.setdefault("plain JSON query (paper)", []).append(out.value is not None)
        query = out.value.query if out.value is not None else " ".join(d.turns)
        return keyed(retriever.search(query, 10))

    def tool(candidates: bool, label: str):
        pipe = DrugRagPipeline(llm, engine, DrugRagSettings(candidates=candidates))

        def run(d):
            query, failure, _ = pipe.distill(dialogue_text(d), Tally())
            follow.setdefault(label, []).append(failure is None)
            return keyed(retriever.search(query.text, 10))
        return run

    configs = {"plain JSON query (paper)": plain,
               "tool calling": tool(False, "tool calling"),
               "tool calling + candidates + repair (drugrag)": tool(True, "tool calling + candidates + repair (drugrag)")}
    configs["_follow"] = follow
    return configs
