"""Prompt templates: text files beside this module, `### system` / `### user` sections,
`$name` placeholders (string.Template, so JSON braces need no escaping)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Template

_SECTION = re.compile(r"^### (system|user|assistant)\s*$", re.MULTILINE)


@lru_cache(maxsize=None)
def _template(name: str) -> str:
    return resources.files("medground.llm").joinpath("prompts", f"{name}.txt").read_text("utf-8")


def fill(name: str, **values: object) -> str:
    """The template ``name`` with every placeholder filled; a missing value is a KeyError."""
    return Template(_template(name)).substitute({k: str(v) for k, v in values.items()})


def messages(name: str, **values: object) -> list[dict[str, str]]:
    """Chat messages from a sectioned template.

    The template is split into its role sections *before* the values are filled in, so a
    question or passage that contains a "### system" line stays text inside its own message
    and can never open a new role.
    """
    parts = _SECTION.split(_template(name))
    if len(parts) < 3:
        raise ValueError(f"prompt template {name!r} has no '### system' / '### user' sections")
    filled = {k: str(v) for k, v in values.items()}
    return [{"role": role, "content": Template(body).substitute(filled).strip()}
            for role, body in zip(parts[1::2], parts[2::2])]


def format_options(options: dict[str, str]) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())
