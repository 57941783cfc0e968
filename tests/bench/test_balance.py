"""dlhack bench balance: work per rank per step, the wait it implies, and the jitter."""
import numpy as np

from dlhack.bench import balance


def pairs(*lengths):
    return [(np.zeros(a, np.int32), np.zeros(b, np.int32)) for a, b in lengths]


def test_work_counts_tokens_and_padded_cells():
    # tokens: sources 2 + 4, decoder 1 + 1 and 3 + 1; cells: 2 sentences x (4 + 4)
    assert balance.work(pairs((2, 1), (4, 3))) == (12, 16)


def test_wait_fraction_is_the_mean_gap_to_the_slowest():
    w = np.array([[[10, 20], [10, 10]], [[6, 6], [4, 6]]], float)  # (steps, ranks, measures)
    np.testing.assert_allclose(balance.wait_fraction(w), [(0 + 1 / 6) / 2, (0.25 + 0) / 2])


def test_balanced_shares_even_out_tokens_that_shards_do_not():
    rng = np.random.RandomState(0)
    train = pairs(*rng.randint(1, 25, size=(2000, 2)))
    for make, limit in ((balance.train_iterators, 1.0), (balance.balanced_iterators, 0.002)):
        w = balance.per_step_work(make(train, 32, 2), 20)
        assert balance.wait_fraction(w)[0] <= limit
    shards = balance.wait_fraction(balance.per_step_work(balance.train_iterators(train, 32, 2),
                                                         20))[0]
    assert shards > 0.002  # separate shards do differ: the comparison can show something


def test_main_prints_both_dealings_and_the_jitter(capsys):
    assert balance.main(["--ranks", "2", "--jitter-steps", "2", "--units", "8",
                         "--layers", "1", "--batchsize", "16"]) == 0
    text = capsys.readouterr().out
    assert "BalancedIterator" in text and "dlhack train (shards)" in text
    assert "fused:" in text and "readable:" in text
