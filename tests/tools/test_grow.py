"""``dlhack grow``: a run whose rank count grows ends where its serial reference ends.

The serial reference is one process that takes, at every step, the union of the batches the
ranks of that phase take (each rank's shard and bucketed plan, recomputed here from the seed),
at the rate the phase sets: N ranks with batch b are one process with batch N * b (lesson 3).
So a phase that resumed with the wrong place in the epoch, the wrong shards, the old rate, or
lost Adam's moments or step count, ends elsewhere. Float64 and no dropout keep rounding and
RNG out of the comparison (each rank's dropout masks are its own). Each phase is a real
``mpiexec`` job under ``dlhack.jobs`` with a timeout.
"""
import chainer
import numpy as np
import pytest

from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel.scatter import permutation, shard_indices
from dlhack.parallel.schedules import lr_scale, warmup_scaled_lr
from dlhack.tools.grow import Phase, grow, main

N_TRAIN, BATCH, UNITS, LR, SEED = 90, 8, 8, 0.01, 3
TRAIN = ["--n-train", N_TRAIN, "--batchsize", BATCH, "--units", UNITS, "--layers", 1,
         "--lr", LR, "--seed", SEED, "--dropout", 0, "--n-eval", 8, "--no-progress"]


def rank_iterators(train, ranks, epoch_detail):
    """Each rank's BucketIterator of a ``ranks``-rank job, placed ``epoch_detail`` epochs in."""
    order = permutation(len(train), shuffle=True, seed=SEED)
    its = [BucketIterator([train[i] for i in shard_indices(len(train), ranks, r, order,
                                                             equal_length=True)],
                          BATCH, seed=SEED) for r in range(ranks)]
    for it in its:
        whole, part = divmod(epoch_detail, 1)
        for _ in range(int(whole) * len(it) + round(part * len(it))):
            it.next()
    return its


def serial_reference(phases, scale_lr="none", warmup=0):
    """The parameters one process reaches with the union of the ranks' batches at every step."""
    np.random.seed(SEED)  # as train() does, before the corpus and the model
    corpus = default_corpus(seed=SEED, n_train=N_TRAIN)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=UNITS, n_layers=1,
                    dropout=0.0)
    optimizer = chainer.optimizers.Adam(alpha=LR)
    optimizer.setup(model)
    epoch_detail, end, steps = 0.0, 0.0, []
    for phase in phases:
        end += phase.epochs
        its = rank_iterators(corpus.train, phase.ranks, epoch_detail)
        base = LR if phase.lr is None else phase.lr
        while epoch_detail < end - 1e-9:  # the stop trigger: (end, "epoch")
            optimizer.alpha = warmup_scaled_lr(epoch_detail, base,
                                               lr_scale(scale_lr, phase.ranks), warmup)
            union = [pair for it in its for pair in it.next()]
            optimizer.update(model, **convert(union))
            epoch_detail = its[0].epoch_detail
            steps.append(len(union))
    return {name: p.array for name, p in model.namedparams()}, steps


def trained(out):
    with np.load(out / "model.npz") as saved:  # keys: parameter paths without the "/"
        return {"/" + name: saved[name] for name in saved.files}


def assert_matches_reference(out, phases, **schedule):
    with chainer.using_config("dtype", np.float64):
        reference, steps = serial_reference(phases, **schedule)
    params = trained(out)
    assert params.keys() == reference.keys()
    worst = max(np.abs(params[k] - reference[k]).max() for k in reference)
    assert worst < 1e-9, f"grown run differs from its serial reference by {worst:g}"
    return steps


@pytest.fixture
def float64(monkeypatch):
    monkeypatch.setenv("CHAINER_DTYPE", "float64")  # read by every rank's Chainer


@pytest.mark.parametrize("schedule", [{}, {"scale_lr": "linear", "warmup": 1.5}],
                         ids=["constant-rate", "linear-scaling-warmup"])
def test_one_rank_then_two_ends_at_the_serial_reference(tmp_path, float64, schedule):
    phases = [Phase(1, 2), Phase(2, 1)]
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in schedule.items()]
    run = grow(phases, [*TRAIN, *flags], out=tmp_path, timeout=180)
    steps = assert_matches_reference(tmp_path, phases, **schedule)
    # one rank: 12 batches an epoch (90 sentences, 8 a batch); two: 6 a rank (45 each)
    assert len(steps) == 30 and sum(steps[:24]) == 2 * 90 and sum(steps[24:]) == 90
    assert max(steps[:24]) == 8 and max(steps[24:]) == 16
    assert [p.metrics["iterations"] for p in run.phases] == [24, 30]
    assert [p.metrics["global_batchsize"] for p in run.phases] == [8, 16]
    assert [e["epoch"] for e in run.log] == [1, 2, 3]  # one log across the phases
    assert all(p.dev_bleu is not None and p.seconds > 0 for p in run.phases)


def test_a_phase_that_decays_the_rate_and_one_that_starts_mid_epoch(tmp_path, float64):
    """One rank throughout, the rate divided by 4 after 1.5 epochs: the decay it is compared
    with. The second phase starts half-way through an epoch."""
    phases = [Phase(1, 1.5), Phase(1, 1, lr=LR / 4)]
    run = grow(phases, TRAIN, out=tmp_path, timeout=180)
    assert_matches_reference(tmp_path, phases)
    assert [p.metrics["iterations"] for p in run.phases] == [18, 30]


def test_growing_mid_epoch_keeps_the_fraction_of_the_epoch(tmp_path, float64):
    """Also: each phase ends on a periodic snapshot (every 6 iterations), which the snapshot
    at the end must not write again on any rank (a collective one rank skipped would hang)."""
    phases = [Phase(1, 0.5), Phase(2, 1)]
    run = grow(phases, [*TRAIN, "--snapshot-every", 6], out=tmp_path, timeout=180)
    assert_matches_reference(tmp_path, phases)
    assert [p.metrics["epochs"] for p in run.phases] == [0.5, 1.5]


def test_a_branch_resumes_the_end_of_another_run(tmp_path, float64):
    """Runs that share a first phase branch from one run of it (lesson 5 does)."""
    first = grow([Phase(1, 1)], TRAIN, out=tmp_path / "first", timeout=180)
    branch = grow([Phase(2, 1)], TRAIN, out=tmp_path / "branch", timeout=180, after=first)
    assert_matches_reference(tmp_path / "branch", [Phase(1, 1), Phase(2, 1)])
    assert [e["epoch"] for e in branch.log] == [1, 2] and branch.phases[0].end_epoch == 2
    assert branch.phases[0].snapshot.parent == tmp_path / "branch"


@pytest.mark.slow
def test_one_two_then_four_ranks(tmp_path, float64):
    phases = [Phase(1, 1), Phase(2, 1), Phase(4, 1)]
    run = grow(phases, TRAIN, out=tmp_path, timeout=300)
    assert_matches_reference(tmp_path, phases)
    assert [p.metrics["global_batchsize"] for p in run.phases] == [8, 16, 32]


def test_a_folder_with_snapshots_is_refused(tmp_path):
    (tmp_path / "snapshot_iter_00000010.snapshot").write_bytes(b"old")
    with pytest.raises(FileExistsError, match="fresh --out"):
        grow([Phase(1, 1)], TRAIN, out=tmp_path)


def test_a_failing_phase_raises_with_its_last_lines(tmp_path):
    with pytest.raises(RuntimeError, match="exit status"):
        grow([Phase(1, 1)], [*TRAIN, "--n-eval", "0", "--corpus", str(tmp_path / "none")],
             out=tmp_path / "run", timeout=120)


@pytest.mark.parametrize("text, phase", [("2:1", Phase(2, 1.0)), ("1:0.5:5e-4",
                                                                     Phase(1, 0.5, 5e-4))])
def test_phases_parse(text, phase):
    assert Phase.parse(text) == phase


@pytest.mark.parametrize("text", ["2", "2:1:3:4", "two:1"])
def test_bad_phases_are_refused(text):
    with pytest.raises(ValueError):
        Phase.parse(text)


def test_the_command_prints_a_line_per_phase(tmp_path, capsys):
    assert main(["-p", "1:1", "2:1", "-o", str(tmp_path), "--", *map(str, TRAIN)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ranks", "batch", "lr", "epochs", "dev", "BLEU", "seconds"]
    assert [line.split()[:2] for line in lines[1:3]] == [["1", "8"], ["2", "16"]]
