"""Shared by the graded tests of lab 06: pretend nodes, shards and sentences, and the serial
references computed from them in one process."""
from types import SimpleNamespace

import numpy as np
import sacrebleu
from labtools import block_imports

# The library's data-parallel evaluation does exercises 3 and 4 for you: not here.
block_imports(("dlhack.parallel", "dlhack.evaluation", "chainermn"),
              "{name} holds the course's own distributed evaluation, which this lab asks you to "
              "write yourself: it cannot be imported here (dlhack.bleu can)")


def node_comm(comm, ranks_per_node, layout="block"):
    """A stand-in for ChainerMN's communicator: rank, size, intra_rank, intra_size, inter_rank.

    ``layout="block"`` puts ranks 0..k-1 on node 0, k..2k-1 on node 1, and so on (the last node
    may hold fewer), as ``mpiexec -ppn k`` does. ``"round-robin"`` deals the ranks out to the
    nodes in turn (rank r on node r % nodes), as ``mpiexec -rr`` and some batch systems do: then
    ``rank % n_gpus`` is not the rank's place on its node.
    """
    return SimpleNamespace(mpi_comm=comm, **vars(place(comm.rank, comm.size, ranks_per_node,
                                                       layout)))


def place(rank, size, ranks_per_node, layout="block"):
    """``node_comm``'s numbers without a communicator (the grader's check computes them too)."""
    nodes = -(-size // ranks_per_node)
    if layout == "block":
        node, intra_rank = rank // ranks_per_node, rank % ranks_per_node
        on_node = min(ranks_per_node, size - node * ranks_per_node)
    else:
        node, intra_rank = rank % nodes, rank // nodes
        on_node = len(range(node, size, nodes))
    return SimpleNamespace(rank=rank, size=size, intra_rank=intra_rank, intra_size=on_node,
                           inter_rank=node, inter_size=nodes)


def shards(items, size):
    """Contiguous shards whose lengths differ by at most one (some empty when items < size)."""
    bounds = np.linspace(0, len(items), size + 1).round().astype(int)
    return [items[bounds[r]:bounds[r + 1]] for r in range(size)]


def uneven_shards(items, size):
    """Shards of very different sizes, growing with the rank (and rank 0's may be empty)."""
    cuts = [len(items) * r * r // (size * size) for r in range(size + 1)]
    return [items[cuts[r]:cuts[r + 1]] for r in range(size)]


def sentences(n=24, seed=0):
    """``n`` token-list hypotheses and references of varying quality and length."""
    rng = np.random.RandomState(seed)
    words = [f"w{i}" for i in range(12)]
    hyps, refs = [], []
    for i in range(n):
        ref = [words[j] for j in rng.randint(0, len(words), 6 + i % 5)]
        wrong = rng.uniform(size=len(ref)) < i / n  # later sentences are worse
        hyp = [w if not bad else "x" for w, bad in zip(ref, wrong)]
        refs.append(ref)
        hyps.append(hyp[:len(hyp) - i % 3])  # some too short: the brevity penalty
    return hyps, refs


def corpus_bleu(hypotheses, references):
    """``dlhack.bleu.corpus_bleu`` without importing dlhack (and Chainer) in every rank."""
    hyps = [" ".join(h) for h in hypotheses]
    refs = [" ".join(r) for r in references]
    return sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score
