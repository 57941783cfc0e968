"""A simulated slow network: every allreduce takes ``alpha + n * beta`` of wall time (lesson 2).

    comm = SlowLink(create_communicator("mpi"), alpha=2e-3, beta=1 / 200e6)  # 2 ms, 200 MB/s
    optimizer = create_multi_node_optimizer(Adam(), comm)                # naive: waits it out
    optimizer = create_multi_node_optimizer(Adam(), comm, overlap=True)  # hides it in backward

Two ranks on one machine talk through shared memory, so communication is almost free and
hiding it gains little. ``SlowLink`` wraps a communicator and makes each allreduce of ``n``
bytes take ``alpha + n * beta`` seconds more (lesson 2's alpha-beta model: ``alpha`` the
latency in seconds, ``beta`` seconds per byte), as if the ranks sat on a slow network. A
message goes on the simulated wire once every rank has handed in its part, that is when the
real allreduce has completed, and the wire carries one message at a time (one sent while
another is on the wire starts when that one arrives):

- the blocking ``multi_node_mean_grad`` (the naive path) reduces for real, then sleeps until
  the message arrives: the rank does nothing meanwhile;
- the nonblocking ``iallreduce`` (the overlapped path) starts the real ``Iallreduce`` and
  returns at once; its request puts the message on the wire when it first sees the real one
  complete (at a ``Test`` or ``Wait``), and reports completion only once it has arrived.
  Meanwhile the rank computes; only ``Wait`` sleeps.

So no thread is needed: the link is a clock (``link_free``, when the wire is next idle), and
the simulated transfer runs "in the background" exactly as a network card's would. Both paths
model the whole allreduce of ``n`` bytes as one message; a real ring pays ``2 (p - 1)``
latencies and moves ``2 (p - 1) / p * n`` bytes per rank.

Cost: nothing but the sleeps; every other method is the wrapped communicator's.
Lesson 9: "Hiding communication".
"""
import time

from mpi4py import MPI


class SlowLink:
    """A communicator whose allreduces take ``alpha + nbytes * beta`` seconds or more.

    Args:
        comm: our communicator or ChainerMN's; everything but the allreduces is its own.
        alpha: latency per message, seconds.
        beta: seconds per byte (1 / bandwidth in bytes per second).
        clock, sleep: the time source and the way to wait (tests pass fake ones).
    """

    def __init__(self, comm, alpha, beta, clock=time.perf_counter, sleep=time.sleep):
        self.comm, self.alpha, self.beta = comm, alpha, beta
        self.clock, self.sleep = clock, sleep
        self.link_free = 0.0  # when the simulated wire is next idle
        self.messages, self.bytes = 0, 0  # what went over it

    def __repr__(self):
        return f"SlowLink({self.comm!r}, alpha={self.alpha:g}, beta={self.beta:g})"

    def __getattr__(self, name):  # only for names this wrapper lacks: rank, size, bcast_obj...
        if name == "comm":
            raise AttributeError(name)
        return getattr(self.comm, name)

    def cost(self, nbytes):
        """Seconds one message of ``nbytes`` occupies the link: ``alpha + nbytes * beta``."""
        return self.alpha + nbytes * self.beta

    def _send(self, nbytes):
        """Put ``nbytes`` on the link; returns the time it arrives."""
        begin = max(self.clock(), self.link_free)
        self.link_free = begin + self.cost(nbytes)
        self.messages += 1
        self.bytes += nbytes
        return self.link_free

    def _sleep_until(self, deadline):
        left = deadline - self.clock()
        if left > 0:
            self.sleep(left)  # time.sleep releases the GIL: other threads compute meanwhile

    def multi_node_mean_grad(self, model, zero_fill=False):
        """The wrapped communicator's, lasting at least ``alpha + n * beta`` (blocking)."""
        nbytes = sum(param.array.nbytes for _, param in model.namedparams()
                     if param.array is not None and (zero_fill or param.grad is not None))
        self.comm.multi_node_mean_grad(model, zero_fill)  # returns once every rank is in
        self._sleep_until(self._send(nbytes))

    def allreduce_grad(self, model, zero_fill=False):
        """ChainerMN's older name for ``multi_node_mean_grad``."""
        self.multi_node_mean_grad(model, zero_fill)

    def iallreduce(self, buffer):
        """Start summing ``buffer`` in place (nonblocking); the request completes on arrival."""
        request = self.comm.mpi_comm.Iallreduce(MPI.IN_PLACE, buffer)
        return SlowRequest(request, buffer.nbytes, self)


class SlowRequest:
    """A request that is complete when MPI's is and the simulated message has then arrived."""

    def __init__(self, request, nbytes, link):
        self.request, self.nbytes, self.link = request, nbytes, link
        self.arrival = None  # set when the real allreduce is first seen complete

    def _on_wire(self, block):
        """Whether the message is on the wire; it goes once the real allreduce is complete
        (waited for if ``block``)."""
        if self.arrival is None:
            if block:
                self.request.Wait()
            elif not self.request.Test():
                return False
            self.arrival = self.link._send(self.nbytes)
        return True

    def Test(self):  # mpi4py's names, so the hook calls MPI's requests and these alike
        """True once complete; never blocks (and drives MPI's progress, as MPI's Test does)."""
        return self._on_wire(block=False) and self.link.clock() >= self.arrival

    def Wait(self):
        """Block until complete."""
        self._on_wire(block=True)
        self.link._sleep_until(self.arrival)
