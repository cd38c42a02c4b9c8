"""benchmarks/embed_cpu.py's arithmetic: FLOPs per chunk and padding waste."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from embed_cpu import MINILM, encoder_flops, overlap, padding_waste  # noqa: E402


def test_encoder_flops_by_hand():
    n, (layers, h, ff) = 10, MINILM
    by_hand = layers * (2 * n * (4 * h * h + 2 * h * ff) + 4 * n * n * h)
    assert encoder_flops(np.array([10, 10]), MINILM) == by_hand
    # the vocabulary head of an MLM adds 2n(H² + H·V)
    assert encoder_flops(np.array([10]), (1, 2, 4), vocab_head=True) == \
        1 * (2 * 10 * (16 + 16) + 4 * 100 * 2) + 2 * 10 * (4 + 2 * 30_522)


def test_padding_waste_orders():
    lengths = np.random.default_rng(1).integers(1, 257, 2000)
    w = padding_waste(lengths, batch=32, block=256)
    assert w["sorted_whole_build"] <= w["sorted_within_256_blocks"] <= w["no_sorting"]
    assert padding_waste(np.full(64, 7))["no_sorting"] == 0.0


def test_overlap():
    assert overlap(np.array([[1, 2], [3, 4]]), np.array([[2, 1], [3, 5]])) == 0.75
