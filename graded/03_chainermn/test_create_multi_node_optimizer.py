"""Exercise 2 of lab 03: ``create_multi_node_optimizer(actual_optimizer, comm)``.

The check behind data parallelism: N ranks, each stepping on its own b examples with the
multi-node optimizer, must end where one process ends after stepping on all N * b examples.
Ranks other than 0 start from other weights, so only the optimizer's broadcast can make them
agree. The examples are drawn from the grader's seed for the launch (printed on failure), and
the optimizer is driven both as Chainer's Trainer drives it (``update(lossfun, ...)``) and after
a backward pass done by hand (``update()``). The ranks observe their weights; the grader trains
the one-process reference itself and decides.
"""
import chainer
import numpy as np
import pytest
from mnlab import LabComm, examples, first_disagreeing_rank, flat, make_mlp, mlp_loss

# The trusted reference: one process, the whole batch (the library's, not the learner's code).
from dlhack.parallel.equivalence import parameters, train_single

PER_RANK = 3   # examples per rank and step
STEPS = 4
PERTURB = 0.25  # rank r starts from rank 0's weights + PERTURB * r


def train_parallel(submission, mpi_comm, make_optimizer, batches, perturb=PERTURB, by_hand=False):
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
def test_broadcast_before_first_update(submission, comm, observe):
    """After one update with learning rate 0, every rank holds rank 0's initial weights; after
    that, weights are never broadcast again."""
    batches = [examples(PER_RANK * comm.size, seed=0)]
    model, optimizer = train_parallel(submission, comm, lambda: chainer.optimizers.SGD(lr=0.0),
                                      batches)
    observe(first=flat(parameters(model)))
    # A second update at learning rate 0 after rank 0 alone moved its weights: a broadcast
    # that happens once leaves the other ranks where they were.
    if comm.rank == 0:
        for param in model.params():
            param.array[...] += 1.0
    optimizer.update(mlp_loss, model, batches[0][comm.rank * PER_RANK:(comm.rank + 1) * PER_RANK])
    observe(second=flat(parameters(model)))


def check_broadcast_before_first_update(obs, run):
    root = flat(parameters(make_mlp()))
    values = obs["first"]
    if not isinstance(values, np.ndarray) or values.shape != root.shape:
        return "the model's parameters changed shape after one update"
    if not np.isfinite(values).all():
        return ("the weights are nan or inf after one update at learning rate 0: the step used a "
                "gradient that was never computed (garbage): call model.cleargrads() before "
                "loss.backward(), which adds into param.grad")
    if not np.allclose(values, root, rtol=0, atol=1e-12):
        own = root + PERTURB * run.rank
        why = " (they are still its own initial weights)" if np.allclose(values, own) else ""
        return (f"rank {run.rank} starts from different weights than rank 0{why}: broadcast "
                f"rank 0's parameters (comm.mpi_comm.Bcast of each param.array) before the first "
                f"update, so every rank starts from the same model")
    if run.rank > 0 and np.allclose(obs["second"], root + 1.0, rtol=0, atol=1e-12):
        return (f"rank {run.rank} took rank 0's weights again at the second update: the weights "
                f"were broadcast again (one message per parameter at every step). Broadcast only "
                f"before the first update, and remember that it is done (self.broadcast_done = "
                f"True, an attribute of the optimizer, not a local variable)")
    return None


OPTIMIZERS = {"SGD(lr=0.5)": lambda lr=0.5: chainer.optimizers.SGD(lr=lr),
              "Adam(alpha=0.05)": lambda: chainer.optimizers.Adam(alpha=0.05)}
# update() with no lossfun, after cleargrads and backward by hand (from equal weights, since that
# backward runs before the first broadcast): the mean is still the optimizer's to take.
BY_HAND = "Adam(alpha=0.05) and update() after a backward by hand"
RUNS = {**{label: (make, {}) for label, make in OPTIMIZERS.items()},
        BY_HAND: (OPTIMIZERS["Adam(alpha=0.05)"], {"by_hand": True, "perturb": 0.0})}


def global_batches(seed, size):
    return [examples(PER_RANK * size, seed=[seed, step]) for step in range(STEPS)]


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_equals_one_process_big_batch(submission, comm, observe, seed):
    """N ranks x batch b, for SGD and Adam, end where one process with batch N * b ends, driven
    through update(lossfun, ...) and through update() after a backward pass by hand."""
    batches = global_batches(seed, comm.size)
    final = {}
    for label, (make_optimizer, how) in RUNS.items():
        model, _ = train_parallel(submission, comm, make_optimizer, batches, **how)
        final[label] = flat(parameters(model))
    observe(final=final)


def check_equals_one_process_big_batch(obs, run):
    size = run.size
    batches = global_batches(run.seed, size)
    try:
        per_rank_all = [run.observed(r)["final"] for r in range(size)]
    except Exception:  # noqa: BLE001 - a rank that failed on its own says why
        return None
    for label, (make_optimizer, how) in RUNS.items():
        text = f"{label} (examples drawn with seed {run.seed})"
        got = obs["final"][label]
        if not np.isfinite(got).all():
            return (f"with {text}, the weights are nan or inf after {STEPS} steps: clear the "
                    f"gradients (model.cleargrads()) before every loss.backward(), which adds "
                    f"into param.grad")
        rank = first_disagreeing_rank([p[label] for p in per_rank_all])
        if rank is not None:
            return (f"with {text}, rank {rank}'s weights differ from rank 0's after {STEPS} steps: "
                    f"each rank computed its gradient on other examples, so average the gradients "
                    f"over the ranks (mean_gradients) before every update, and broadcast rank 0's "
                    f"weights before the first" +
                    (", also when update() is called with no lossfun" if how else ""))

        def reference(make=make_optimizer, data=batches):
            return flat(train_single(make_mlp, make, data, mlp_loss))

        diff = float(np.max(np.abs(got - reference())))
        if diff <= 1e-9:
            continue
        hint = ""
        if label.startswith("SGD") and size > 1 and np.max(np.abs(
                got - reference(lambda make=make_optimizer: make(0.5 * size)))) <= 1e-9:
            hint = (": it matches one process with a learning rate comm.size times larger, so the "
                    "gradients were summed over the ranks: divide by comm.size for the mean")
        elif np.max(np.abs(got - reference(data=batches[1:]))) <= 1e-9:
            hint = (": it matches one process that skipped the first batch: the first update "
                    "must broadcast and then still take its step")
        elif how.get("by_hand"):
            hint = (": called as update() with no lossfun, after a backward pass done outside, "
                    "the optimizer must still average the gradients over the ranks before its "
                    "step (mean_gradients whether or not lossfun is given)")
        hint = hint or (": broadcast first, then in every update compute the gradients, average "
                        "them over the ranks, and let the wrapped optimizer step")
        return (f"with {text}, after {STEPS} steps the weights differ from one process trained "
                f"on the whole batches of {PER_RANK * size} (largest difference {diff:.3g})"
                f"{hint}")
    return None
