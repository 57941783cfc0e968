"""BucketIterator: every sample once per epoch, similar lengths, the same plan on every rank;
BalancedIterator: one global batch per step, dealt among ranks by tokens, the mean exact."""
import chainer
import numpy as np
import pytest

from dlhack.corpus.batching import BalancedIterator, BucketIterator, split_by_tokens
from dlhack.model.seq2seq import Seq2seq, convert


def dataset(n, seed):
    rng = np.random.RandomState(seed)
    return [(np.zeros(rng.randint(1, 30), np.int32), np.zeros(rng.randint(1, 30), np.int32))
            for _ in range(n)]


def test_each_sample_once_per_epoch():
    data = dataset(103, 0)
    it = BucketIterator(data, 10, seed=1)
    seen = []
    while True:
        seen += [id(pair) for pair in it.next()]
        if it.is_new_epoch:
            break
    assert sorted(seen) == sorted(id(pair) for pair in data)
    assert it.epoch == 1 and len(it) == 11


def test_batches_have_similar_lengths():
    data = dataset(640, 0)
    bucketed = BucketIterator(data, 64, seed=0)
    spread = [np.ptp([len(x) + len(y) for x, y in bucketed.next()]) for _ in range(10)]
    rng = np.random.RandomState(0)
    random_spread = [np.ptp([len(x) + len(y) for x, y in
                             (data[i] for i in rng.choice(640, 64))]) for _ in range(10)]
    assert np.mean(spread) < 0.5 * np.mean(random_spread)


def test_ranks_with_the_same_seed_see_similar_lengths_at_each_step():
    """Two shards of one corpus: at each iteration the mean lengths are close."""
    a, b = BucketIterator(dataset(640, 1), 64, seed=5), BucketIterator(dataset(640, 2), 64, seed=5)
    for _ in range(10):
        la = np.mean([len(x) + len(y) for x, y in a.next()])
        lb = np.mean([len(x) + len(y) for x, y in b.next()])
        assert abs(la - lb) < 0.2 * max(la, lb)


def test_serialize_resumes_in_place():
    data = dataset(50, 0)
    it = BucketIterator(data, 8, seed=3)
    for _ in range(9):
        it.next()
    saved = {}
    it.serialize(chainer.serializers.DictionarySerializer(saved))
    resumed = BucketIterator(data, 8, seed=3)
    resumed.serialize(chainer.serializers.NpzDeserializer(saved))
    assert resumed.epoch == it.epoch and resumed.current_position == it.current_position
    assert [id(p) for p in resumed.next()] == [id(p) for p in it.next()]


def test_no_repeat_stops_after_one_epoch():
    it = BucketIterator(dataset(20, 0), 8, shuffle=False, repeat=False)
    assert sum(len(b) for b in it) == 20


def test_a_plan_of_another_length_keeps_the_fraction_of_the_epoch():
    """A snapshot of a 1-rank job (48 batches an epoch) resumed at 2 ranks (24 batches each):
    the same epoch and the same fraction of it done, so epoch-based schedules carry on."""
    data = dataset(384, 0)
    whole = BucketIterator(data, 8, seed=3)
    for _ in range(48 + 30):  # one epoch and 30 of 48 batches
        whole.next()
    saved = {}
    whole.serialize(chainer.serializers.DictionarySerializer(saved))
    half = BucketIterator(data[:192], 8, seed=3)  # a shard of a 2-rank job
    half.serialize(chainer.serializers.NpzDeserializer(saved))
    assert (half.epoch, half.current_position) == (1, 15)
    assert half.epoch_detail == whole.epoch_detail == 1 + 30 / 48
    for _ in range(9):  # the rest of the epoch: 9 batches, then the next epoch
        assert not half.is_new_epoch
        half.next()
    assert half.is_new_epoch and half.epoch == 2


def test_an_older_snapshot_without_the_plan_length_loads_in_place():
    data = dataset(50, 0)
    it = BucketIterator(data, 8, seed=3)
    for _ in range(3):
        it.next()
    saved = {}
    it.serialize(chainer.serializers.DictionarySerializer(saved))
    del saved["n_batches"]
    resumed = BucketIterator(data, 8, seed=3)
    resumed.serialize(chainer.serializers.NpzDeserializer(saved))
    assert resumed.current_position == 3 and resumed.epoch_detail == it.epoch_detail


# --- BalancedIterator: one global bucket order, dealt among ranks by tokens ---------------
def work(pairs):
    return sum(len(x) + len(y) + 1 for x, y in pairs)


def test_split_by_tokens_deals_every_item_once_and_evenly():
    rng = np.random.RandomState(0)
    items = rng.randint(1, 40, size=128)
    groups = split_by_tokens(items, 3)
    assert sorted(np.concatenate(groups)) == list(range(128))
    loads = [items[g].sum() for g in groups]
    assert max(loads) - min(loads) <= items.max()
    assert all(len(g) for g in groups)
    with pytest.raises(ValueError):
        split_by_tokens([3, 4], 3)


def test_split_by_tokens_follows_shares():
    """Each group's total follows its share (within one item); equal shares deal as none do;
    every group keeps an item however small its share."""
    rng = np.random.RandomState(1)
    items = rng.randint(1, 40, size=128)
    groups = split_by_tokens(items, 2, shares=[3.0, 1.0])
    assert sorted(np.concatenate(groups)) == list(range(128))
    assert abs(items[groups[0]].sum() - 0.75 * items.sum()) <= items.max()
    equal = split_by_tokens(items, 3, shares=[2.0, 2.0, 2.0])
    assert all((a == b).all() for a, b in zip(equal, split_by_tokens(items, 3), strict=True))
    few = split_by_tokens([5, 4, 3], 3, shares=[100.0, 1.0, 1.0])
    assert [len(g) for g in few] == [1, 1, 1] and few[0].tolist() == [0]  # the longest: fastest
    for bad in ([1.0], [1.0, 0.0], [1.0, -2.0]):
        with pytest.raises(ValueError, match="positive"):
            split_by_tokens(items, 2, shares=bad)


def test_balanced_iterator_deals_by_its_shares_and_counts_its_tokens():
    data = dataset(400, 3)
    its = [BalancedIterator(data, 32, 2, r, seed=1) for r in range(2)]
    for it in its:
        it.shares = np.array([0.7, 0.3])
    shares = [[it.next() for it in its] for _ in range(5)]
    mine = [sum(work(step[r]) for step in shares) for r in range(2)]
    assert 0.65 < mine[0] / sum(mine) < 0.75
    assert [it.tokens for it in its] == mine
    assert all(len(set(map(id, a)) & set(map(id, b))) == 0 for a, b in shares)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_ranks_share_each_global_batch_and_the_epoch(size):
    data = dataset(301, 0)
    its = [BalancedIterator(data, 16, size, r, seed=4) for r in range(size)]
    seen = []
    while True:
        shares = [it.next() for it in its]
        ids = [id(p) for share in shares for p in share]
        assert len(set(ids)) == len(ids)  # disjoint shares of one global batch
        seen += ids
        assert all(s.normalizer == len(ids) / size for s in shares)
        loads = [work(s) for s in shares]
        assert max(loads) - min(loads) <= max(len(x) + len(y) + 1 for x, y in data)
        if its[0].is_new_epoch:
            assert all(it.is_new_epoch for it in its)
            break
    assert sorted(seen) == sorted(id(p) for p in data)  # every sample once, by all ranks


def test_balanced_shares_have_more_even_work_than_separate_shards():
    """What it is for: separate shards bucketed apart differ more, step by step."""
    data = dataset(1280, 1)
    shards = [BucketIterator(data[r::2], 64, seed=5) for r in range(2)]
    shares = [BalancedIterator(data, 64, 2, r, seed=5) for r in range(2)]

    def spread(its):
        return np.mean([abs(work(a) - work(b)) / (work(a) + work(b))
                        for a, b in (tuple(it.next() for it in its) for _ in range(10))])

    assert spread(shares) < 0.5 * spread(shards)


def test_too_small_a_last_batch_joins_another():
    its = [BalancedIterator(dataset(2 * 8 + 1, 2), 4, 2, r, seed=0) for r in range(2)]
    plans = its[0]._batches
    assert all(len(b) >= 2 for b in plans) and sum(len(b) for b in plans) == 17
    assert all(len(it.next()) >= 1 for it in its)


@pytest.mark.parametrize("size", [2, 3])
def test_normalized_shares_average_to_the_global_gradient(size):
    """N ranks' gradients, each loss divided by the normalizer, average to the gradient of the
    whole global batch on one process, though the ranks hold different sentence counts."""
    rng = np.random.RandomState(size)
    lengths = [(10, 10)] + [(1, 1)] * 5  # the long one alone: the ranks hold 1 and 5 (or 1, 3, 2)
    pairs = [(rng.randint(3, 30, a).astype(np.int32), rng.randint(3, 30, b).astype(np.int32))
             for a, b in lengths]
    with chainer.using_config("dtype", np.float64):
        np.random.seed(0)
        model = Seq2seq(30, 30, n_units=6, n_layers=2, dropout=0.0)

    def grads(batch, normalizer=None):
        model.cleargrads()
        model(**convert(batch) | ({"normalizer": normalizer} if normalizer else {})).backward()
        return {n: p.grad.copy() for n, p in model.namedparams()}

    whole = grads(pairs)
    its = [BalancedIterator(pairs, 6 // size, size, r, shuffle=False) for r in range(size)]
    shares = [it.next() for it in its]
    assert sum(map(len, shares)) == 6 and len({len(s) for s in shares}) == size  # uneven
    each = [grads(s, s.normalizer) for s in shares]
    naive = [grads(list(s)) for s in shares]  # a plain list: no normalizer
    for name in whole:
        mean = sum(g[name] for g in each) / size
        np.testing.assert_allclose(mean, whole[name], rtol=1e-9, atol=1e-12, err_msg=name)
    # dividing by its own count instead would be wrong
    assert not all(np.allclose(sum(g[n] for g in naive) / size, whole[n]) for n in whole)
