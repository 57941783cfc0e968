"""What the model room's tests share: random batches of word ids, and a loss with its gradients."""
import numpy as np

V = 40  # the vocabulary of the random batches: ids 3..V-1 (0-2 are PAD, BOS, EOS)


def random_batch(rng, n, max_len=9):
    """``n`` (source, target) pairs of random lengths 1..max_len-1, as two lists of int32 arrays."""
    xs = [rng.randint(3, V, size=rng.randint(1, max_len)).astype(np.int32) for _ in range(n)]
    ys = [rng.randint(3, V, size=rng.randint(1, max_len)).astype(np.int32) for _ in range(n)]
    return xs, ys


def loss_and_grads(model, xs, ys):
    """The model's loss on the batch, and a copy of every parameter's gradient by name."""
    model.cleargrads()
    loss = model(xs, ys)
    loss.backward()
    return float(loss.array), {name: p.grad.copy() for name, p in model.namedparams()}


def sentence_pairs(n_src, n_tgt, seed=0, n=5):
    """``n`` source/target pairs of different lengths (sources 2-8 words, targets 1-7), with ids
    below ``n_src`` and ``n_tgt``: padding must not change what a split model computes."""
    rng = np.random.RandomState(seed)
    xs = [rng.randint(3, n_src, size=rng.randint(2, 9)).astype(np.int32) for _ in range(n)]
    ys = [rng.randint(3, n_tgt, size=rng.randint(1, 8)).astype(np.int32) for _ in range(n)]
    return xs, ys
