"""Exercise 2 of lab 03: ``create_multi_node_optimizer(actual_optimizer, comm)``.

The check behind data parallelism: N ranks, each stepping on its own b examples with the
multi-node optimizer, must end where one process ends after stepping on all N * b examples.
Ranks other than 0 start from other weights, so only the optimizer's broadcast can make them
agree.
"""
import chainer
import numpy as np
import pytest
from mnlab import LabComm, examples, first_disagreeing_rank, flat, make_mlp, mlp_loss

# The trusted reference: one process, the whole batch (the library's, not the learner's code).
from dlhack.parallel.equivalence import max_difference, parameters, train_single

PER_RANK = 3   # examples per rank and step
STEPS = 4


def train_parallel(submission, mpi_comm, make_optimizer, batches, perturb=0.25):
    """Train with the learner's optimizer on this rank's slice of each global batch."""
    comm = LabComm(mpi_comm)
    model = make_mlp()
    for param in model.params():  # rank r > 0 starts elsewhere: the broadcast must fix that
        param.array[...] += perturb * comm.rank
    optimizer = submission.create_multi_node_optimizer(make_optimizer(), comm)
    optimizer.setup(model)
    for batch in batches:
        b = len(batch) // comm.size
        optimizer.update(mlp_loss, model, batch[comm.rank * b:(comm.rank + 1) * b])
    return model


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2], timeout=60)
def test_broadcast_before_first_update(submission, comm):
    """After one update with learning rate 0, every rank holds rank 0's initial weights."""
    batches = [examples(PER_RANK * comm.size, seed=0)]
    model = train_parallel(submission, comm, lambda: chainer.optimizers.SGD(lr=0.0), batches)
    per_rank = comm.allgather(flat(parameters(model)))
    root = flat(parameters(make_mlp()))
    for rank, values in enumerate(per_rank):
        if not np.isfinite(values).all():
            pytest.fail(f"rank {rank}'s weights are nan or inf after one update at learning rate 0: "
                        f"the step used a gradient that was never computed (garbage): call "
                        f"model.cleargrads() before loss.backward(), which adds into param.grad",
                        pytrace=False)
        if not np.allclose(values, root, rtol=0, atol=1e-12):
            own = root + 0.25 * rank
            why = (" (they are still its own initial weights)" if np.allclose(values, own) else "")
            pytest.fail(f"rank {rank} starts from different weights than rank 0{why}: broadcast "
                        f"rank 0's parameters (comm.mpi_comm.Bcast of each param.array) before "
                        f"the first update, so every rank starts from the same model",
                        pytrace=False)


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_equals_one_process_big_batch(submission, comm):
    """N ranks x batch b, for SGD and Adam, end where one process with batch N * b ends."""
    size = comm.size
    batches = [examples(PER_RANK * size, seed=10 + step) for step in range(STEPS)]
    optimizers = {"SGD(lr=0.5)": lambda lr=0.5: chainer.optimizers.SGD(lr=lr),
                  "Adam(alpha=0.05)": lambda: chainer.optimizers.Adam(alpha=0.05)}
    for label, make_optimizer in optimizers.items():
        model = train_parallel(submission, comm, make_optimizer, batches)
        got = parameters(model)
        per_rank = comm.allgather(flat(got))
        broken = [r for r, values in enumerate(per_rank) if not np.isfinite(values).all()]
        assert not broken, (
            f"with {label}, rank {broken[0]}'s weights are nan or inf after {STEPS} steps: clear "
            f"the gradients (model.cleargrads()) before every loss.backward(), which adds into "
            f"param.grad")
        rank = first_disagreeing_rank(per_rank)
        assert rank is None, (
            f"with {label}, rank {rank}'s weights differ from rank 0's after {STEPS} steps: each "
            f"rank computed its gradient on other examples, so average the gradients over the "
            f"ranks (mean_gradients) before every update, and broadcast rank 0's weights before "
            f"the first")
        want = train_single(make_mlp, make_optimizer, batches, mlp_loss)
        diff = max_difference(got, want)
        if diff <= 1e-9:
            continue
        hint = ""
        if label.startswith("SGD") and size > 1 and max_difference(
                got, train_single(make_mlp, lambda make=make_optimizer: make(0.5 * size), batches,
                                  mlp_loss)) <= 1e-9:
            hint = (": it matches one process with a learning rate comm.size times larger, so the "
                    "gradients were summed over the ranks: divide by comm.size for the mean")
        elif max_difference(got, train_single(make_mlp, make_optimizer, batches[1:],
                                              mlp_loss)) <= 1e-9:
            hint = (": it matches one process that skipped the first batch: the first update "
                    "must broadcast and then still take its step")
        hint = hint or (": broadcast first, then in every update compute the gradients, average "
                        "them over the ranks, and let the wrapped optimizer step")
        pytest.fail(f"with {label}, after {STEPS} steps the weights differ from one process "
                    f"trained on the whole batches of {PER_RANK * size} (largest difference "
                    f"{diff:.3g}){hint}", pytrace=False)
