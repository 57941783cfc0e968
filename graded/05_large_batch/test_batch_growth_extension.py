"""Exercise 3 of lab 05: ``batch_growth_extension(batchsize, milestones, factor)``, Smith et
al.'s schedule: multiply the training iterator's batch size by ``factor`` at each milestone."""
import chainer
import pytest
from schedule_runs import check_extension, first_difference, tiny_run


def describe(seen):
    def sentence(i, got, want):
        text = (f"update {i + 1} (at epoch {seen[i][0]:.3g}) used a batch of {got:g}, "
                f"expected {want:g}")
        if i == 0:
            text += (": the first batch must already have the schedule's size; set it in the "
                     "extension's initializer too")
        return text
    return sentence


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_changes_the_iterator_batch(submission):
    """64 examples, batch 8 doubled at epochs 1 and 2: 8 batches of 8, 4 of 16, 2 of 32."""
    ext = submission.batch_growth_extension(8, [1, 2], 2)
    problem = check_extension(ext, "batch_growth_extension")
    assert problem is None, problem
    seen, iterator, _ = tiny_run(ext, chainer.optimizers.SGD(lr=0.1), batchsize=3)
    got = [size for _, _, size in seen]
    want = [8] * 8 + [16] * 4 + [32] * 2
    problem = first_difference(got, want, describe(seen))
    if problem and set(got) == {3}:
        problem = ("every batch had the iterator's original size 3: set "
                   "trainer.updater.get_iterator('main').batch_size in the extension")
    assert problem is None, problem
    assert iterator.batch_size == 32, f"the iterator ends with batch_size {iterator.batch_size}, expected 32"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_short_run_needs_fewer_updates(submission):
    """4 epochs, batch 8 doubled at epochs 2 and 3 (given as [3, 2]): 22 updates, not 32; it learns."""
    ext = submission.batch_growth_extension(8, [3, 2], 2)
    problem = check_extension(ext, "batch_growth_extension")
    assert problem is None, problem
    seen, _, losses = tiny_run(ext, chainer.optimizers.MomentumSGD(lr=0.2), epochs=4)
    got = [size for _, _, size in seen]
    problem = first_difference(got, [8] * 16 + [16] * 4 + [32] * 2, describe(seen))
    if problem:
        problem += " (the milestones may come in any order: count those <= epoch, or sort them)"
    assert problem is None, problem
    assert losses[-1] < 0.8 * losses[0], (
        f"the training loss went from {losses[0]:.3f} to {losses[-1]:.3f}: the run did not learn")
