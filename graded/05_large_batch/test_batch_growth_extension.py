"""Exercise 3 of lab 05: ``batch_growth_extension(batchsize, milestones, factor)``, Smith et
al.'s schedule: multiply the training iterator's batch size by ``factor`` at each milestone."""
import chainer
import numpy as np
import pytest
from labtools import drawn
from schedule_runs import check_extension, first_difference, tiny_run


def schedule(batchsize, milestones, factor, epoch):
    return batchsize * factor ** sum(1 for m in milestones if epoch >= m)


MISTAKES = [  # (the batch at an epoch under a plausible wrong rule, what the rule gets wrong)
    (lambda b, ms, f, e: b * f ** sum(1 for m in ms if e > m),
     ("that counts only the milestones already passed (epoch > milestone); the batch grows at the "
     "milestone itself (epoch >= milestone)")),
    (lambda b, ms, f, e: b * f ** next((i for i, m in enumerate(ms) if e < m), len(ms)),
     ("that counts the milestones as if they came sorted; they may come in any order: count "
     "those <= epoch, or sort them first")),
    (lambda b, ms, f, e: schedule(b, ms, f, int(e)),
     ("that counts the milestones reached by whole epochs; a milestone may fall inside an epoch: "
     "compare it with trainer.updater.epoch_detail")),
    (lambda b, ms, f, e: b * 2 ** sum(1 for m in ms if e >= m),
     "that doubles at each milestone; the batch grows by `factor` there"),
    (lambda b, ms, f, e: b * f * sum(1 for m in ms if e >= m) or b,
     "that is batchsize x factor x k; after k milestones the batch is batchsize x factor ** k"),
]


def cause(seen, i, got, batchsize, milestones, factor, start):
    """The plausible wrong rule that explains every update up to ``i``, or ""."""
    if i == 0 and got == start != batchsize:
        return (": that is the iterator's own batch size; start from `batchsize`, and set it in "
                "the extension's initializer too")
    if i == 0:
        return (": the first batch must already have the schedule's size; set it in the "
                "extension's initializer too")
    for rule, why in MISTAKES:
        if all(rule(batchsize, milestones, factor, e) == b for e, _, b in seen):
            return ": " + why
    return ""


def describe(seen, *case):
    def sentence(i, got, want):
        return (f"update {i + 1} (at epoch {seen[i][0]:.4g}) used a batch of {got:g}, "
                f"expected {want:g}" + cause(seen, i, got, *case))
    return sentence


def observe_case(submission, batchsize, milestones, factor, start, optimizer, epochs=3):
    """What ``batch_growth_extension(batchsize, milestones, factor)`` did over ``epochs`` of 64
    examples, the iterator created with batch ``start``: a dict for the check half."""
    ext = submission.batch_growth_extension(batchsize, list(milestones), factor)
    problem = check_extension(ext, "batch_growth_extension")
    if problem:
        return {"problem": problem}
    seen, iterator, losses = tiny_run(ext, optimizer, batchsize=start, epochs=epochs)
    return {"problem": None, "seen": [[float(e), int(b)] for e, _, b in seen],
            "final": [float(iterator.epoch_detail), int(iterator.batch_size)],
            "losses": [losses[0], losses[-1]]}


def check_case(got, batchsize, milestones, factor, start):
    """None, or a sentence on what the observed run (``observe_case``) did wrong."""
    if got["problem"]:
        return got["problem"]
    seen = [(e, None, b) for e, b in got["seen"]]
    sizes = [b for _, _, b in seen]
    want = [schedule(batchsize, milestones, factor, epoch) for epoch, _, _ in seen]
    problem = first_difference(sizes, want, describe(seen, batchsize, milestones, factor, start))
    if problem and set(sizes) == {start}:
        problem = (f"every batch had the iterator's original size {start}: set "
                   f"trainer.updater.get_iterator('main').batch_size in the extension")
    epoch, size = got["final"]
    final = schedule(batchsize, milestones, factor, epoch)
    if not problem and size != final:
        problem = f"the iterator ends with batch_size {size}, expected {final}"
    return problem


def drawn_cases(seed, n=4):
    """Start batches 1-8, factors 2-4, one to three milestones anywhere in 3 epochs (in eighths,
    as often mid-epoch as not), in any order; the largest batch fits the 64 examples."""
    rng = np.random.RandomState(seed)
    cases = []
    while len(cases) < n:
        batchsize, factor = int(rng.randint(1, 9)), int(rng.randint(2, 5))
        milestones = [float(m) / 8 for m in rng.choice(np.arange(1, 24), rng.randint(1, 4),
                                                        replace=False)]
        if batchsize * factor ** len(milestones) <= 64:
            cases.append((batchsize, milestones, factor, int(rng.randint(1, 9))))
    return cases


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_changes_the_iterator_batch(submission, observe, seed):
    """64 examples, batch 8 doubled at epochs 1 and 2: 8 batches of 8, 4 of 16, 2 of 32; then
    drawn start batches, factors and (fractional, unordered) milestones."""
    runs = [observe_case(submission, 8, [1, 2], 2, 3, chainer.optimizers.SGD(lr=0.1))]
    for batchsize, milestones, factor, start in drawn_cases(seed):
        runs.append(observe_case(submission, batchsize, milestones, factor, start,
                                 chainer.optimizers.SGD(lr=0.1)))
    observe(runs=runs)


def check_changes_the_iterator_batch(obs, run):
    cases = [(8, [1, 2], 2, 3), *drawn_cases(run.seed)]
    for i, (got, (batchsize, milestones, factor, start)) in enumerate(zip(obs["runs"], cases)):
        problem = check_case(got, batchsize, milestones, factor, start)
        if problem and i:
            return (f"batch_growth_extension({batchsize}, {milestones}, {factor}), the iterator "
                    f"made with batch {start}: {problem}" + drawn(run.seed))
        if problem:
            return problem
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_short_run_needs_fewer_updates(submission, observe):
    """4 epochs, batch 4 tripled at epochs 2.5 and 1.5 (given in that order, the iterator made
    with batch 8): fewer updates than at batch 4 throughout; it learns."""
    observe(run=observe_case(submission, 4, [2.5, 1.5], 3, 8,
                             chainer.optimizers.MomentumSGD(lr=0.2), epochs=4))


def check_short_run_needs_fewer_updates(obs, run):
    problem = check_case(obs["run"], 4, [2.5, 1.5], 3, 8)
    if problem:
        return problem
    first, last = obs["run"]["losses"]
    if not last < 0.8 * first:
        return f"the training loss went from {first:.3f} to {last:.3f}: the run did not learn"
    return None
