"""Evaluation over uneven shards gives the single-process figures (loss and corpus BLEU)."""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from dlhack.bleu import corpus_bleu
from dlhack.parallel import (
    create_communicator,
    create_multi_node_evaluator,
    gather_corpus_bleu,
    scatter_dataset,
)
from tests.parallel.tiny_mlp import make_mlp, mlp_examples


def uneven_slices(n, size):
    """Shards of very different sizes, growing with the rank (24 on 2 ranks: 6 and 18)."""
    cuts = [n * r * r // (size * size) for r in range(size + 1)]
    return [slice(cuts[r], cuts[r + 1]) for r in range(size)]


def sentences(n, seed=0):
    """``n`` token-list references and hypotheses of varying quality (later ones worse)."""
    rng = np.random.RandomState(seed)
    words = [f"w{i}" for i in range(12)]
    refs, hyps = [], []
    for i in range(n):
        ref = [words[j] for j in rng.randint(0, len(words), 6 + i % 5)]
        wrong = rng.uniform(size=len(ref)) < i / n  # sentence i: about i/n of its words wrong
        hyp = [w if not bad else "x" for w, bad in zip(ref, wrong)]
        refs.append(ref)
        hyps.append(hyp[: len(hyp) - i % 3])  # and some too short: the brevity penalty
    return hyps, refs


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_gather_corpus_bleu_equals_single_process(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    hyps, refs = sentences(24)
    full = corpus_bleu(hyps, refs)
    mine = uneven_slices(len(hyps), size)[rank]
    scores = {name: gather_corpus_bleu(hyps[mine], refs[mine],
                                       create_communicator(name, mpi_comm=mpi_comm))
              for name in ("ring", "chainermn:naive")}
    per_rank = mpi_comm.allgather(corpus_bleu(hyps[mine], refs[mine]))

    for name, score in scores.items():
        assert score == pytest.approx(full, abs=1e-9), name
    if size > 1:  # the wrong way really is wrong here, so this test can tell them apart
        assert abs(np.mean(per_rank) - full) > 0.5, (per_rank, full)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_multi_node_evaluator_loss_equals_single_process(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    f64 = np.float64
    dev = mlp_examples(11, seed=5, dtype=f64)
    model = L.Classifier(make_mlp(seed=0, dtype=f64))
    x, t = chainer.dataset.concat_examples(dev)
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        y = model.predictor(x)
        expected = {"main/loss": float(F.softmax_cross_entropy(y, t).array),
                    "main/accuracy": float(F.accuracy(y, t).array)}

    def evaluator(shard):
        # batch 2 over shards of 3, 4, 5 or 6: a short last batch on some ranks
        it = chainer.iterators.SerialIterator(shard, 2, repeat=False, shuffle=False)
        return chainer.training.extensions.Evaluator(it, model)

    results = {}
    for name in ("ring", "chainermn:naive"):
        comm = create_communicator(name, mpi_comm=mpi_comm)
        shard = scatter_dataset(dev if rank == 0 else None, comm)  # exact: 11 = 6+5, 4+4+3, ...
        results[name] = create_multi_node_evaluator(evaluator(shard), comm)()
        # What ChainerMN's evaluator computes: the plain mean of the ranks' own figures.
        local = float(evaluator(shard)()["main/loss"])
        results[f"{name} mean of rank means"] = comm.allreduce_obj(local) / size

    for name in ("ring", "chainermn:naive"):
        got = results[name]
        assert sorted(got) == sorted(expected), got
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (name, key)
        if size > 1:  # uneven shards: the mean of rank means is off, so the test can fail
            wrong = results[f"{name} mean of rank means"]
            assert abs(wrong - expected["main/loss"]) > 1e-6
