import pytest

from medground.eval.elo import Judgment, elo_bootstrap, elo_ratings, expected_score


def test_elo_by_hand():
    r = elo_ratings([Judgment("A", "B", "a")])
    assert r == {"A": 1016.0, "B": 984.0}
    r = elo_ratings([Judgment("A", "B", "a"), Judgment("A", "B", "b")])
    e_b = 1 / (1 + 10 ** ((1016 - 984) / 400))
    assert r["B"] == pytest.approx(984 + 32 * (1 - e_b))
    assert r["A"] == pytest.approx(1016 - 32 * (1 - e_b))
    assert elo_ratings([Judgment("A", "B", "tie")], initial=1500) == {"A": 1500.0, "B": 1500.0}
    assert expected_score(1400, 1000) == pytest.approx(1 / 1.1)
    with pytest.raises(ValueError):
        elo_ratings([Judgment("A", "B", "c")])  # type: ignore[arg-type]


def test_elo_bootstrap_orders_a_clearly_better_system():
    js = [Judgment("good", "bad", "a")] * 40 + [Judgment("good", "bad", "b")] * 10
    ci = elo_bootstrap(js, n_boot=200, seed=0)
    assert ci["good"].low > 1000 > ci["bad"].high
    assert ci["good"].low <= ci["good"].median <= ci["good"].high
    assert elo_bootstrap(js, n_boot=200, seed=0) == ci
    assert sum(elo_ratings(js).values()) == pytest.approx(2000)  # Elo is zero-sum
