"""The serial reference of data parallelism (dlhack.parallel.equivalence), at one rank, where
there is nothing to average: data-parallel training is single-process training bit for bit, and
the comparison names what it cannot compare. (At 2 to 4 ranks it is held against real training
in test_optimizer.py, test_overlap.py and test_translator_equivalence.py.)"""
import chainer
import numpy as np
import pytest
from mpi4py import MPI

from dlhack.parallel import create_communicator
from dlhack.parallel.equivalence import max_difference, parameters, train_both
from tests.parallel.tiny_mlp import make_mlp, mlp_examples, mlp_loss


def test_one_rank_is_single_process_training_exactly():
    comm = create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    examples = mlp_examples(24, seed=1, dtype=np.float64)
    batches = [examples[i:i + 8] for i in range(0, 24, 8)]
    parallel, single = train_both(lambda: make_mlp(seed=0, dtype=np.float64),
                                  lambda: chainer.optimizers.SGD(lr=0.1), batches, mlp_loss,
                                  comm, perturb=0.5)  # perturb * rank: nothing at rank 0
    assert max_difference(parallel, single) == 0.0
    untrained = parameters(make_mlp(seed=0, dtype=np.float64))
    assert sorted(untrained) == sorted(single) and max_difference(untrained, single) > 0


def test_parameters_that_do_not_match_are_refused():
    with pytest.raises(ValueError, match="different parameters"):
        max_difference({"/w": np.zeros(2)}, {"/b": np.zeros(2)})
    assert max_difference({}, {}) == 0.0
