"""dlhack.snapshot in one process: the file check, and resuming a Chainer Trainer exactly.

A toy model with dropout and a shuffling iterator stands in for the translator here, and the
process is a job of one rank (a communicator of size one over ``MPI.COMM_SELF``), as in
``dlhack train`` without mpiexec; ``test_faults.py`` runs the real ``dlhack.train`` under mpiexec.
"""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest
from mpi4py import MPI

from dlhack import snapshot
from dlhack.parallel import create_communicator
from dlhack.parallel.schedules import StepDecay
from dlhack.snapshot import SnapshotError, attach_snapshots, read_snapshot, write_snapshot


class Toy(chainer.Chain):
    """Linear -> dropout -> Linear: dropout draws its masks from numpy's global RNG."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1, self.l2 = L.Linear(4, 8), L.Linear(8, 3)

    def forward(self, x, t):
        loss = F.softmax_cross_entropy(self.l2(F.dropout(F.relu(self.l1(x)), 0.5)), t)
        chainer.report({"loss": loss}, self)
        return loss


def toy_trainer(out, iterations, every=0, resume=None, keep=3):
    np.random.seed(0)
    data = chainer.datasets.TupleDataset(np.random.rand(40, 4).astype(np.float32),
                                         np.random.randint(0, 3, 40).astype(np.int32))
    model = Toy()
    optimizer = chainer.optimizers.Adam().setup(model)
    it = chainer.iterators.SerialIterator(data, 7, shuffle=True)  # shuffles with numpy.random
    updater = chainer.training.StandardUpdater(it, optimizer)
    trainer = chainer.training.Trainer(updater, (iterations, "iteration"), out=str(out))
    trainer.extend(chainer.training.extensions.LogReport(trigger=(2, "iteration")))
    comm = create_communicator("ring", mpi_comm=MPI.COMM_SELF)
    ext = attach_snapshots(trainer, comm, every, resume=resume, keep=keep)
    return trainer, model, ext


def params(model):
    return {name: p.array.copy() for name, p in model.namedparams()}


def assert_same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_file_round_trip_and_damage(tmp_path):
    path = tmp_path / "s.snapshot"
    arrays = {"w": np.arange(1000, dtype=np.float32)}
    header = write_snapshot(path, arrays, iteration=7, ranks=2)
    assert header["iteration"] == 7 and header["ranks"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["s.snapshot"]  # no temp file left behind
    got, payload = read_snapshot(path)
    assert got == header and len(payload) == header["payload_bytes"]

    data = path.read_bytes()
    path.write_bytes(data[:-100])  # truncated
    with pytest.raises(SnapshotError, match=r"truncated.*expects \d+ payload bytes, found \d+"):
        read_snapshot(path)
    flipped = bytearray(data)
    flipped[-50] ^= 0x01  # one flipped bit in the payload
    path.write_bytes(bytes(flipped))
    with pytest.raises(SnapshotError, match=r"damaged.*expects payload sha256 [0-9a-f]{64}, "
                                            r"found [0-9a-f]{64}"):
        read_snapshot(path)
    path.write_bytes(b"PK\x03\x04 a plain npz")
    with pytest.raises(SnapshotError, match="not a dlhack snapshot"):
        read_snapshot(path)
    with pytest.raises(SnapshotError, match="cannot read"):
        read_snapshot(tmp_path / "missing.snapshot")


def test_resume_matches_uninterrupted_run(tmp_path):
    left_over = tmp_path / "full" / ".snapshot_iter_00000003.snapshot.999.tmp"  # killed write
    left_over.parent.mkdir()
    left_over.write_bytes(b"half a snapshot")
    trainer, model, _ = toy_trainer(tmp_path / "full", 12, every=4, keep=2)
    trainer.run()
    assert not left_over.exists()
    full = params(model)
    names = [p.name for p in snapshot.find_snapshots(tmp_path / "full")]
    assert names == ["snapshot_iter_00000012.snapshot", "snapshot_iter_00000008.snapshot"]

    resume_from = tmp_path / "full" / names[1]
    trainer, model, ext = toy_trainer(tmp_path / "resumed", 12, resume=str(resume_from))
    trainer.run()
    assert ext.resumed_from == (str(resume_from), 8)
    assert_same(params(model), full)
    assert [e["iteration"] for e in trainer.get_extension("LogReport").log] == [2, 4, 6, 8, 10, 12]

    # The check can fail: the same resume without the saved RNG state ends elsewhere.
    trainer, model, _ = toy_trainer(tmp_path / "reseeded", 12, resume=str(resume_from))
    trainer.extend(lambda t: np.random.seed(1), trigger=(9, "iteration"), priority=1000)
    trainer.run()
    assert any(not np.array_equal(full[k], v) for k, v in params(model).items())


def test_auto_resume_skips_damaged_and_refuses_all_damaged(tmp_path, capsys):
    trainer, model, _ = toy_trainer(tmp_path, 8, every=4)
    trainer.run()
    final = params(model)
    newest, older = snapshot.find_snapshots(tmp_path)
    newest.write_bytes(newest.read_bytes()[:-10])

    trainer, model, ext = toy_trainer(tmp_path, 8, resume="auto")
    trainer.run()
    assert ext.resumed_from == (str(older), 4)
    assert_same(params(model), final)
    assert "skipping snapshot_iter_00000008.snapshot" in capsys.readouterr().out

    data = bytearray(older.read_bytes())
    data[len(data) // 2] ^= 0xFF
    older.write_bytes(bytes(data))
    trainer, _, _ = toy_trainer(tmp_path, 8, resume="auto")
    with pytest.raises(SnapshotError, match="every snapshot in .* is damaged"):
        trainer.run()
    trainer, _, _ = toy_trainer(tmp_path, 8, resume=str(older))  # an explicit path: no fallback
    with pytest.raises(SnapshotError, match="damaged: the header expects payload sha256"):
        trainer.run()


def test_auto_resume_with_nothing_starts_over(tmp_path, capsys):
    trainer, _, ext = toy_trainer(tmp_path / "empty", 2, resume="auto")
    trainer.run()
    assert ext.resumed_from is None and trainer.updater.iteration == 2
    assert "none in" in capsys.readouterr().out


def test_a_schedule_starts_from_the_resumed_epoch(tmp_path):
    """A rate schedule's first rate comes from the resumed epoch, not from epoch 0: the
    snapshot is loaded before any other extension starts (``ResumeFirst``)."""
    def with_decay(out, resume=None):
        trainer, model, _ = toy_trainer(out, 12, every=4, resume=resume)
        trainer.extend(StepDecay(1e-3, milestones=[1], factor=100, attr="alpha"))
        return trainer, model

    trainer, model = with_decay(tmp_path / "full")
    trainer.run()
    trainer, resumed = with_decay(tmp_path / "resumed", tmp_path / "full" / snapshot.NAME.format(8))
    trainer.run()
    assert_same(params(resumed), params(model))


def test_ranks_the_writer_did_not_have_get_streams_of_their_own(tmp_path):
    """Resumed on more ranks: rank 0 gets its saved RNG state back, each new rank a stream
    seeded by (iteration, rank), the same on every resume and different from rank to rank."""
    trainer, _, _ = toy_trainer(tmp_path, 8, every=4)
    trainer.run()
    _, payload = read_snapshot(tmp_path / snapshot.NAME.format(8))
    draws = {}
    for rank in (0, 1, 2, 1):
        trainer, _, _ = toy_trainer(tmp_path / "again", 8)
        snapshot.load_trainer_arrays(trainer, payload, rank)
        draws.setdefault(rank, []).append(np.random.rand(3))
    np.testing.assert_array_equal(draws[1][0], draws[1][1])  # reproducible
    np.random.seed([8, 2])
    np.testing.assert_array_equal(draws[2][0], np.random.rand(3))
    assert not np.allclose(draws[1][0], draws[2][0]) and not np.allclose(draws[0][0], draws[1][0])


class OtherRank:
    """Rank 1 of 2, as far as a ``Snapshots`` extension can tell: it counts its gathers."""

    rank, size, gathers = 1, 2, 0

    def gather_obj(self, obj, root=0):
        self.gathers += 1


def test_every_rank_knows_what_was_written(tmp_path):
    """``finish`` writes only when the last iteration has no snapshot yet, and every rank must
    agree on that: a rank that called the gather alone would hang the job."""
    trainer, _, _ = toy_trainer(tmp_path, 4)
    trainer.run()
    ext = snapshot.Snapshots(OtherRank())
    ext(trainer)
    ext.finish(trainer)  # the same iteration: nothing to gather again
    assert ext.comm.gathers == 1 and ext.written == 4
    trainer.updater.iteration = 5
    ext.finish(trainer)
    assert ext.comm.gathers == 2
