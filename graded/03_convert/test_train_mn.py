"""Lab 3 (03_convert): the learner's train_mn.py, train_single.py converted to ChainerMN.

Each test is declared at one rank and runs the script itself at 1, 2 and 3 ranks on one node and
at 4 ranks on two simulated nodes (convert.py's LAYOUTS, observe.py): 47 training sentences
(padded shards at 2, 3 and 4 ranks), 60 dev sentences, 16 units, batch 4 per rank, 4 iterations,
float64 and no dropout. The --gpu start runs at 2 nodes x 2 ranks, in blocks and round-robin.
What is checked is every choice a rank makes (each device, each writer) and what is meant (the
sentences each rank trained on and evaluated), not the first or the mean. Each message names the
edit to look at.
"""
import pytest
from convert import prefetch
from jobviews import check_jobs, observe_jobs
from mnedits import communicator, device_from_intra_rank, ends_cleanly, only_rank_0_reports
from mntraining import (
    every_sentence_once_per_epoch,
    identical_parameters,
    same_as_one_process_with_n_times_the_batch,
    validation_loss_over_the_whole_dev_set,
)

TIMEOUT = 600  # s: up to six jobs of a few seconds each (and waits for other tests' jobs)


@pytest.fixture(scope="module", autouse=True)
def jobs_started(submission):
    """Every job of this file, started at once in the background (two at a time)."""
    prefetch(submission)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_communicator(submission, observe):
    """A ChainerMN communicator on every rank: naive on CPU, a GPU one (pure_nccl) with --gpu."""
    observe_jobs(submission, communicator, observe)


def check_communicator(obs, run):
    return check_jobs(obs, communicator)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_device_from_intra_rank(submission, observe):
    """With --gpu on 2 nodes x 2 ranks (simulated): the communicator first, then GPU intra_rank
    for the model, the updater and every evaluator, and no other GPU ever chosen."""
    observe_jobs(submission, device_from_intra_rank, observe)


def check_device_from_intra_rank(obs, run):
    return check_jobs(obs, device_from_intra_rank)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_every_sentence_once_per_epoch(submission, observe):
    """Across the ranks, every training sentence once per epoch (plus the padding of equal
    shards), dealt in a shuffled order."""
    observe_jobs(submission, every_sentence_once_per_epoch, observe)


def check_every_sentence_once_per_epoch(obs, run):
    return check_jobs(obs, every_sentence_once_per_epoch)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_identical_parameters(submission, observe):
    """Every rank ends with the same parameters, even when they start from different ones."""
    observe_jobs(submission, identical_parameters, observe)


def check_identical_parameters(obs, run):
    return check_jobs(obs, identical_parameters)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_same_as_one_process_with_n_times_the_batch(submission, observe):
    """N ranks with batch b train as one process with batch N*b on the same sentences."""
    observe_jobs(submission, same_as_one_process_with_n_times_the_batch, observe)


def check_same_as_one_process_with_n_times_the_batch(obs, run):
    return check_jobs(obs, same_as_one_process_with_n_times_the_batch)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_validation_loss_over_the_whole_dev_set(submission, observe):
    """Every rank reports the validation loss of one process over the whole dev set, each
    evaluating its own share of the dev sentences."""
    observe_jobs(submission, validation_loss_over_the_whole_dev_set, observe)


def check_validation_loss_over_the_whole_dev_set(obs, run):
    return check_jobs(obs, validation_loss_over_the_whole_dev_set)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_only_rank_0_reports(submission, observe):
    """Rank 0 writes the log and the snapshot; the other ranks, on every node, report and write
    nothing."""
    observe_jobs(submission, only_rank_0_reports, observe)


def check_only_rank_0_reports(obs, run):
    return check_jobs(obs, only_rank_0_reports)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_ends_cleanly(submission, observe):
    """The converted job ends with every rank at the end of the script and mpiexec's status 0."""
    observe_jobs(submission, ends_cleanly, observe)


def check_ends_cleanly(obs, run):
    return check_jobs(obs, ends_cleanly)
