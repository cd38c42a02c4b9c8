"""Seeded development/test splits fixed before a reader is built, so nothing is fitted on a test item.

A split is decided by a hash of (seed, item id) alone: it never depends on which other items
exist, so adding items to a set leaves every earlier item where it was.
"""

from __future__ import annotations

import hashlib


def split_of(item_id: str, *, seed: int = 0, test_share: float = 0.5) -> str:
    """"test" for about ``test_share`` of ids, else "dev"; stable across runs and machines."""
    if not 0.0 <= test_share <= 1.0:
        raise ValueError(f"test_share must lie in [0, 1], got {test_share}")
    h = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return "test" if int.from_bytes(h[:8], "big") / 2**64 < test_share else "dev"


# Medication QA (690 consumer questions): 30 % test, frozen on 2026-11-24 before the consultation
# reader (reading/consult.py) and its typer were built; everything is fitted on the rest.
MEDICATION_QA_SEED = 27
MEDICATION_QA_TEST_SHARE = 0.3


def medication_qa_split(qid: str) -> str:
    return split_of(f"medication-qa/{qid}", seed=MEDICATION_QA_SEED, test_share=MEDICATION_QA_TEST_SHARE)


# The textbook test bed (benchmarks/data/textbook_testbed.md): the answerable set's 40 items with
# their rewordings and the new-chapter items, half frozen as test on 2026-11-24 before the
# per-option reader (reading/options.py) was built. A base item and all its rewordings share
# one split, so no reworded twin of a test item is ever seen while building.
TEXTBOOK_TESTBED_SEED = 28


def textbook_testbed_split(base_qid: str) -> str:
    return split_of(f"textbook-testbed/{base_qid}", seed=TEXTBOOK_TESTBED_SEED, test_share=0.5)
