"""Exercise 2 of lab 03: ``create_multi_node_optimizer(actual_optimizer, comm)``.

The check behind data parallelism: N ranks, each stepping on its own b examples with the
multi-node optimizer, must end where one process ends after stepping on all N * b examples.
Ranks other than 0 start from other weights, so only the optimizer's broadcast can make them
agree. The examples are drawn from a seed chosen afresh at each grading (printed on failure), and
the optimizer is driven both as Chainer's Trainer drives it (``update(lossfun, ...)``) and after
a backward pass done by hand (``update()``).
"""
import chainer
import numpy as np
import pytest
from mnlab import LabComm, drawn, examples, first_disagreeing_rank, flat, make_mlp, mlp_loss

# The trusted reference: one process, the whole batch (the library's, not the learner's code).
from dlhack.parallel.equivalence import max_difference, parameters, train_single

PER_RANK = 3   # examples per rank and step
STEPS = 4


def train_parallel(submission, mpi_comm, make_optimizer, batches, perturb=0.25, by_hand=False):
    """Train with the learner's optimizer on this rank's slice of each global batch: through
    ``update(lossfun, ...)``, or with ``by_hand`` after ``cleargrads`` and ``backward`` here."""
    comm = LabComm(mpi_comm)
    model = make_mlp()
    for param in model.params():  # rank r > 0 starts elsewhere: the broadcast must fix that
        param.array[...] += perturb * comm.rank
    optimizer = submission.create_multi_node_optimizer(make_optimizer(), comm)
    optimizer.setup(model)
    for batch in batches:
        b = len(batch) // comm.size
        mine = batch[comm.rank * b:(comm.rank + 1) * b]
        if by_hand:
            model.cleargrads()
            mlp_loss(model, mine).backward()
            optimizer.update()
        else:
            optimizer.update(mlp_loss, model, mine)
    return model, optimizer


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_broadcast_before_first_update(submission, comm):
    """After one update with learning rate 0, every rank holds rank 0's initial weights; after
    that, weights are never broadcast again."""
    batches = [examples(PER_RANK * comm.size, seed=0)]
    model, optimizer = train_parallel(submission, comm, lambda: chainer.optimizers.SGD(lr=0.0),
                                      batches)
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
    # A second update at learning rate 0 after rank 0 alone moved its weights: a broadcast
    # that happens once leaves the other ranks where they were.
    if comm.rank == 0:
        for param in model.params():
            param.array[...] += 1.0
    optimizer.update(mlp_loss, model, batches[0][comm.rank * PER_RANK:(comm.rank + 1) * PER_RANK])
    moved = comm.allgather(bool(np.allclose(flat(parameters(model)), root + 1.0, rtol=0,
                                            atol=1e-12)))
    again = [rank for rank in range(1, comm.size) if moved[rank]]
    if again:
        pytest.fail(f"rank {again[0]} took rank 0's weights again at the second update: the "
                    f"weights were broadcast again (one message per parameter at every step). "
                    f"Broadcast only before the first update, and remember that it is done "
                    f"(self.broadcast_done = True, an attribute of the optimizer, not a local "
                    f"variable)", pytrace=False)


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_equals_one_process_big_batch(submission, comm):
    """N ranks x batch b, for SGD and Adam, end where one process with batch N * b ends, driven
    through update(lossfun, ...) and through update() after a backward pass by hand."""
    size = comm.size
    seed = drawn(comm, 0, 2 ** 31)
    batches = [examples(PER_RANK * size, seed=[seed, step]) for step in range(STEPS)]
    optimizers = {"SGD(lr=0.5)": lambda lr=0.5: chainer.optimizers.SGD(lr=lr),
                  "Adam(alpha=0.05)": lambda: chainer.optimizers.Adam(alpha=0.05)}
    runs = [(label, make, {}) for label, make in optimizers.items()]
    # update() with no lossfun, after cleargrads and backward by hand (from equal weights, since
    # that backward runs before the first broadcast): the mean is still the optimizer's to take.
    runs.append(("Adam(alpha=0.05) and update() after a backward by hand",
                 optimizers["Adam(alpha=0.05)"], {"by_hand": True, "perturb": 0.0}))
    for label, make_optimizer, how in runs:
        label = f"{label} (examples drawn with seed {seed})"
        model, _ = train_parallel(submission, comm, make_optimizer, batches, **how)
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
            f"the first" + (", also when update() is called with no lossfun" if how else ""))
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
        if how.get("by_hand") and not hint:
            hint = (": called as update() with no lossfun, after a backward pass done outside, "
                    "the optimizer must still average the gradients over the ranks before its "
                    "step (mean_gradients whether or not lossfun is given)")
        hint = hint or (": broadcast first, then in every update compute the gradients, average "
                        "them over the ranks, and let the wrapped optimizer step")
        pytest.fail(f"with {label}, after {STEPS} steps the weights differ from one process "
                    f"trained on the whole batches of {PER_RANK * size} (largest difference "
                    f"{diff:.3g}){hint}", pytrace=False)
