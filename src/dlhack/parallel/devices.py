"""Which GPU each rank takes: ``intra_rank % visible``, with the node's layout checked.

    gpu = select_gpu(comm)                       # every rank, once, before any array exists
    chainer.get_device(f"@cupy:{gpu}").use()

Sites show a node's GPUs to its ranks in one of two ways (lesson 8):

- every rank sees all of the node's GPUs (``--gpus-per-node``, PBS's ``ngpus``): rank k of the
  node takes GPU k, its ``intra_rank``;
- each rank sees only its own (``srun --gpus-per-task=1``, a cgroup per task): every rank sees
  one GPU, numbered 0, and takes it.

``intra_rank % visible`` is right in both. What can still be wrong is the layout: more ranks on
a node than GPUs for them, so that two ranks share one GPU (lesson 6, bug a: slower, and soon
out of memory). :func:`select_gpu` compares the GPUs the ranks of a node chose by their hardware
address (PCI bus id), so that it tells "each sees its own GPU 0" from "all see the same one",
and raises the same ``LayoutError`` on every rank, naming the ranks that would share, unless
``share=True`` asks for it (trying 2 ranks on a 1-GPU machine).

Cost: one ``gather_obj`` and one ``bcast_obj`` of a few bytes per rank, once.
"""
import os


class LayoutError(RuntimeError):
    """The ranks and the GPUs they see do not make one GPU per rank."""


def gpu_index(intra_rank, visible):
    """The GPU a rank takes among the ``visible`` ones it sees: ``intra_rank % visible``."""
    if visible < 1:
        shown = os.environ.get("CUDA_VISIBLE_DEVICES")
        why = f"CUDA_VISIBLE_DEVICES={shown!r}" if shown is not None else "no GPU found"
        raise LayoutError(f"this rank sees no GPU ({why}): ask the scheduler for GPUs "
                          f"(--gpus-per-node), or run without --gpu")
    return intra_rank % visible


def layout_problem(choices, share=False):
    """What is wrong with the ranks' choices, or None.

    Args:
        choices: one ``(rank, node, gpu address or None, error or None)`` per rank; ``node`` is
            the rank's ``inter_rank``.
        share: allow several ranks of a node on one GPU.
    """
    errors = [f"rank {rank}: {error}" for rank, _, _, error in choices if error]
    if errors:
        return "; ".join(errors)
    users = {}
    for rank, node, address, _ in choices:
        users.setdefault((node, address), []).append(rank)
    shared = {key: ranks for key, ranks in users.items() if len(ranks) > 1}
    if not shared or share:
        return None
    (node, address), ranks = min(shared.items(), key=lambda item: item[1])
    on_node = sum(n == node for _, n, _, _ in choices)
    gpus = sum(n == node for n, _ in users)
    return (f"ranks {', '.join(map(str, ranks))} would share one GPU ({address}) on node "
            f"{node}: {on_node} ranks there, {gpus} GPU(s) for them. Start at most one rank per "
            f"GPU on a node (--ntasks-per-node = GPUs per node), or ask for sharing "
            f"(dlhack train --share-gpu)")


def visible_gpus():
    """How many GPUs this process sees (CuPy's count, which CUDA_VISIBLE_DEVICES narrows)."""
    try:
        import cupy
    except ImportError:
        raise LayoutError("CuPy is not installed, and GPUs need it: pip install '.[gpu]' "
                          "(dlhack doctor checks it)") from None
    return cupy.cuda.runtime.getDeviceCount()


def gpu_address(index):
    """GPU ``index``'s PCI bus id: the same GPU has the same id in every rank of a node."""
    import cupy

    return cupy.cuda.Device(index).pci_bus_id


def select_gpu(comm, visible=None, address=gpu_address, share=False):
    """This rank's GPU, ``intra_rank % visible``, once every rank's choice is checked.

    A collective call: every rank of ``comm`` calls it, and every rank raises the same
    ``LayoutError`` when a rank sees no GPU, or when two ranks of a node chose one GPU (unless
    ``share``).

    Args:
        comm: a communicator with ``rank``, ``intra_rank``, ``inter_rank``, ``gather_obj`` and
            ``bcast_obj`` (ours or ChainerMN's).
        visible: how many GPUs this rank sees (default: :func:`visible_gpus`).
        address: ``address(index)``, the GPU's identity on its node (default: its PCI bus id).
        share: allow ranks of a node to share a GPU.
    """
    index = error = where = None
    try:
        index = gpu_index(comm.intra_rank, visible_gpus() if visible is None else visible)
        where = address(index)
    except Exception as exc:  # noqa: BLE001 - every rank must reach the gather below
        error = exc if isinstance(exc, LayoutError) else f"{type(exc).__name__}: {exc}"
    choices = comm.gather_obj((comm.rank, comm.inter_rank, where, error and str(error)))
    problem = comm.bcast_obj(layout_problem(choices, share) if comm.rank == 0 else None)
    if problem:
        raise LayoutError(problem)
    return index
