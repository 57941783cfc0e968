"""BucketIterator: every sample once per epoch, similar lengths, the same plan on every rank."""
import chainer
import numpy as np

from dlhack.corpus.batching import BucketIterator


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
