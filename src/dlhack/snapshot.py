"""Snapshots that survive a crash, and resuming from them (``--snapshot-every``, ``--resume``).

    mpiexec -n 2 dlhack train --iterations 2000 --snapshot-every 100 --out result/run
    mpiexec -n 2 dlhack train --iterations 2000 --snapshot-every 100 --out result/run --resume auto

Every ``every`` iterations rank 0 writes ``OUT/snapshot_iter_00000100.snapshot`` and keeps the
newest ``keep``. A snapshot holds everything the rest of the run depends on:

- the trainer, as Chainer serializes it: parameters, Adam's moments and step count, the
  updater's iteration, the iterator's (epoch, position) (``BucketIterator`` re-derives its
  plan from seed and epoch), the triggers and rank 0's LogReport;
- every rank's numpy RNG state (gathered to rank 0): dropout on the CPU draws its masks from
  ``numpy.random``; without them a resumed run would drift from the uninterrupted one. (CuPy's
  and cuDNN's are not saved: a GPU run with dropout resumes correctly, not bit for bit.)

The file is one line of header, then the payload (an ``.npz`` archive)::

    DLHACK-SNAPSHOT 1 {"iteration": 100, "ranks": 2, "payload_bytes": 81234, "sha256": "..."}

It is written to a temporary file, flushed, then renamed over the final name (``os.replace``
is atomic): a rank killed mid-write leaves the previous snapshots intact, never a half-written
one. Before anything is loaded the payload's length and SHA-256 are checked against the header;
a truncated or damaged file raises ``SnapshotError`` saying which file and what was found.

Resuming: rank 0 reads and checks the file and broadcasts the payload; every rank then loads
the same bytes. So only rank 0 needs to see ``OUT`` (no shared file system needed), and a bad
file stops every rank with the same error instead of leaving some waiting in a collective.
``--resume auto`` takes the newest valid snapshot in OUT, says so when it skips a damaged one,
starts from iteration 0 when OUT has none, and refuses to start when every one is damaged.
A snapshot of k ranks resumes on any number (``dlhack.tools.grow``): the shards are dealt
afresh, the iterator keeps the fraction of the epoch done, ranks below k get their RNG states
back and each new rank a stream of its own, seeded by (iteration, rank): reproducible.

Why not ``chainermn.extensions.multi_node_snapshot``? Chainer's ``snapshot`` under it writes
plain ``.npz`` files with no checksum, autoloads the newest unchecked, and saves no RNG state.

Lesson: "Runs that survive faults".
"""
import hashlib
import io
import json
import re
from pathlib import Path

import chainer
import numpy as np
from chainer.serializers import DictionarySerializer, NpzDeserializer

from dlhack.atomic import write_bytes

MAGIC = b"DLHACK-SNAPSHOT 1 "
NAME = "snapshot_iter_{:08d}.snapshot"
NAME_RE = re.compile(r"snapshot_iter_(\d+)\.snapshot$")
MAX_HEADER = 4096  # bytes; a header line is about 150


class SnapshotError(RuntimeError):
    """A snapshot file that is missing, truncated, damaged or not a snapshot at all."""


# The file: header line + npz payload ----------------------------------------------------

def write_snapshot(path, arrays, iteration, ranks=1):
    """Write ``arrays`` (name -> numpy array) to ``path`` atomically, with a checked header."""
    path = Path(path)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = buffer.getvalue()
    header = {"iteration": int(iteration), "ranks": int(ranks), "payload_bytes": len(payload),
              "sha256": hashlib.sha256(payload).hexdigest()}
    write_bytes(path, MAGIC + json.dumps(header).encode() + b"\n" + payload)
    return header


def read_snapshot(path):
    """Read and check a snapshot file.

    Returns:
        ``(header, payload)``: the header dict and the payload bytes, checked against it.

    Raises:
        SnapshotError: the file is missing, is not a snapshot, or its payload is shorter,
            longer or other than the header says.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SnapshotError(f"cannot read snapshot {path}: {e.strerror}") from None
    end = data.find(b"\n", 0, MAX_HEADER)
    if not data.startswith(MAGIC) or end < 0:
        raise SnapshotError(f"{path} is not a dlhack snapshot: expected a first line starting "
                            f"with {MAGIC!r}, found {data[:40]!r}")
    try:
        header = json.loads(data[len(MAGIC):end])
        expected_bytes, expected_hash = int(header["payload_bytes"]), header["sha256"]
    except (ValueError, KeyError, TypeError) as e:
        raise SnapshotError(f"snapshot {path} has a damaged header ({e}): "
                            f"{data[:end]!r}") from None
    payload = data[end + 1:]
    if len(payload) != expected_bytes:
        what = "truncated" if len(payload) < expected_bytes else "longer than written"
        raise SnapshotError(f"snapshot {path} is {what}: the header expects {expected_bytes} "
                            f"payload bytes, found {len(payload)}")
    found_hash = hashlib.sha256(payload).hexdigest()
    if found_hash != expected_hash:
        raise SnapshotError(f"snapshot {path} is damaged: the header expects payload sha256 "
                            f"{expected_hash}, found {found_hash}")
    return header, payload


def find_snapshots(directory):
    """The snapshot files in ``directory``, newest (highest iteration) first."""
    directory = Path(directory)
    found = [(int(m.group(1)), p) for p in directory.glob("snapshot_iter_*.snapshot")
             if (m := NAME_RE.match(p.name))] if directory.is_dir() else []
    return [p for _, p in sorted(found, reverse=True)]


def newest_valid_snapshot(directory, warn=print):
    """The newest snapshot in ``directory`` that passes its check, as ``(path, header,
    payload)``; ``None`` when there is none at all.

    Damaged ones are skipped with a warning. Raises ``SnapshotError`` when every one is
    damaged: starting over would silently throw the run away.
    """
    errors = []
    for path in find_snapshots(directory):
        try:
            return (path, *read_snapshot(path))
        except SnapshotError as e:
            warn(f"snapshot: skipping {path.name}: {e}")
            errors.append(str(e))
    if errors:
        raise SnapshotError(f"every snapshot in {directory} is damaged; move them away to start "
                            "over:\n  " + "\n  ".join(errors))
    return None


# The trainer <-> arrays ------------------------------------------------------------------

def trainer_arrays(trainer, rng_states):
    """The trainer's state and every rank's numpy RNG state as a dict of plain arrays.

    ``None`` values (Chainer stores them as pickled object arrays) are listed by name
    instead, so that loading never unpickles anything from the file.
    """
    target = {}
    trainer.serialize(DictionarySerializer(target))
    arrays = {k: np.asarray(v) for k, v in target.items()}  # python scalars become 0-d arrays
    none_keys = [k for k, v in arrays.items() if v.dtype == object and v[()] is None]
    for k in none_keys:
        del arrays[k]
    if any(v.dtype == object for v in arrays.values()):
        raise TypeError("a trainer value is neither an array nor None; cannot snapshot it")
    arrays["_none_keys"] = np.array(none_keys, dtype=str)
    # np.random.get_state(): ('MT19937', keys (624,) uint32, pos, has_gauss, cached_gaussian)
    arrays["rng/keys"] = np.stack([s[1] for s in rng_states])  # (ranks, 624)
    arrays["rng/pos"] = np.array([s[2] for s in rng_states])
    arrays["rng/has_gauss"] = np.array([s[3] for s in rng_states])
    arrays["rng/cached_gaussian"] = np.array([s[4] for s in rng_states])
    return arrays


def load_trainer_arrays(trainer, payload, rank):
    """Load a payload written from ``trainer_arrays`` into ``trainer``; set this rank's RNG
    (a rank the writing job did not have gets a new stream, seeded by iteration and rank).

    The updater (model, optimizer, iterator, iteration) must match the file exactly. An
    extension is loaded when the file has it: rank 0 saved its LogReport, the other ranks
    have none to load, and a resumed run may add or drop the progress bar.
    """
    with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
        arrays = dict(npz)
    arrays.update({k: np.asarray(None) for k in arrays.pop("_none_keys").tolist()})
    trainer.updater.serialize(NpzDeserializer(arrays, path="updater/"))
    parts = [("stop_trigger/", trainer.stop_trigger)]
    # Trainer keeps its extensions in a private dict; Trainer.serialize walks it the same way.
    for name, entry in trainer._extensions.items():
        parts += [(f"extensions/{name}/", entry.extension),
                  (f"extension_triggers/{name}/", entry.trigger)]
    for prefix, target in parts:
        if hasattr(target, "serialize") and any(k.startswith(prefix) for k in arrays):
            target.serialize(NpzDeserializer(arrays, path=prefix))
    trainer._snapshot_elapsed_time = float(arrays["_snapshot_elapsed_time"])
    if rank < len(arrays["rng/pos"]):
        np.random.set_state(("MT19937", arrays["rng/keys"][rank], int(arrays["rng/pos"][rank]),
                             int(arrays["rng/has_gauss"][rank]),
                             float(arrays["rng/cached_gaussian"][rank])))
    else:  # a new rank (resumed on more ranks): its own stream, the same on every resume
        np.random.seed([trainer.updater.iteration, rank])


# The trainer extension -------------------------------------------------------------------

class Snapshots(chainer.training.Extension):
    """Write snapshots (rank 0) and resume from one (every rank). See the module docstring.

    Args:
        comm: the communicator (a single process has one of size one).
        resume: ``None``, ``"auto"`` or a snapshot path.
        keep: how many of the newest snapshots to keep in ``trainer.out``.
    """

    priority = -100  # after every other extension: the snapshot sees this iteration's state

    def __init__(self, comm, resume=None, keep=3):
        self.comm, self.resume, self.keep = comm, resume, keep
        self.rank = comm.rank
        self.resumed_from = None  # (path, iteration) once resumed
        self.written = None  # the iteration of the last snapshot written

    def _say(self, message):
        if self.rank == 0:  # only rank 0 prints
            print(message, flush=True)

    def load(self, trainer):
        """Resume, if asked to (``ResumeFirst`` calls it before any other extension starts)."""
        if not self.resume:
            return
        found = error = None
        if self.rank == 0:
            try:
                if self.resume == "auto":
                    found = newest_valid_snapshot(trainer.out, warn=self._say)
                    if found is None:
                        self._say(f"snapshot: none in {trainer.out}; starting from iteration 0")
                else:
                    found = (Path(self.resume), *read_snapshot(self.resume))
            except SnapshotError as e:
                error = str(e)
        # the same verdict and the same bytes on every rank
        found, error = self.comm.bcast_obj((found, error), root=0)
        if error:
            raise SnapshotError(error)
        if found is None:
            return
        path, header, payload = found
        load_trainer_arrays(trainer, payload, self.rank)
        iteration = trainer.updater.iteration
        if iteration != header["iteration"]:
            raise SnapshotError(f"snapshot {path}: the header says iteration "
                                f"{header['iteration']}, the trainer state inside says {iteration}")
        self.resumed_from, self.written = (str(path), iteration), iteration
        self._say(f"snapshot: resumed from {path} at iteration {iteration}")
        if header["ranks"] != self.comm.size:
            done = trainer.updater.epoch_detail % 1
            self._say(f"snapshot: written by {header['ranks']} rank(s), resumed on "
                      f"{self.comm.size}: every rank has a new shard; epoch "
                      f"{trainer.updater.epoch + 1} goes on from {done:.0%} done")

    def __call__(self, trainer):
        """Write a snapshot of this iteration; a collective call (RNG states are gathered)."""
        state = np.random.get_state()
        states = self.comm.gather_obj(state, root=0)  # rank 0: every rank's, in rank order
        iteration = self.written = trainer.updater.iteration  # every rank: finish() asks
        if self.rank != 0:  # only rank 0 writes
            return
        out = Path(trainer.out)
        write_snapshot(out / NAME.format(iteration), trainer_arrays(trainer, states),
                       iteration, ranks=len(states))
        # The oldest snapshots, and the temporary file of a write that a kill interrupted.
        for stale in [*find_snapshots(out)[self.keep:], *out.glob(".snapshot_iter_*.tmp")]:
            stale.unlink(missing_ok=True)

    def finish(self, trainer):
        """Write this iteration's snapshot unless it was just written (call it on every rank
        when ``trainer.run()`` has returned): a finished run can be resumed to train longer."""
        if self.written != trainer.updater.iteration:
            self(trainer)


class ResumeFirst(chainer.training.Extension):
    """Loads the snapshot before every other extension's ``initialize`` (Trainer.run calls
    them by priority): a rate schedule then sets the first rate from the resumed epoch."""

    priority = chainer.training.PRIORITY_WRITER + 100  # before every other extension

    def __init__(self, snapshots):
        self.snapshots = snapshots

    def initialize(self, trainer):
        self.snapshots.load(trainer)


def attach_snapshots(trainer, comm, every, resume=None, keep=3):
    """Add snapshots every ``every`` iterations (0: never) and resume from ``resume``.

    Call it on every rank (writing gathers each rank's RNG state). ``resume`` is ``None``,
    ``"auto"`` (the newest valid snapshot in ``trainer.out``) or a snapshot path; the state is
    loaded when ``trainer.run()`` starts, so extensions added after this call are restored too.

    Returns:
        The ``Snapshots`` extension.
    """
    extension = Snapshots(comm, resume=resume, keep=keep)
    trigger = (every, "iteration") if every else (lambda _: False)
    trainer.extend(extension, trigger=trigger, name="snapshots")
    trainer.extend(ResumeFirst(extension), trigger=lambda _: False, name="resume")
    return extension
