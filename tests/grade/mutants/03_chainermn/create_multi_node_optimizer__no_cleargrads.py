# MUTANT: never clears the gradients: they pile up from step to step
# EXPECT: cleargrads
import chainer


class MultiNodeOptimizer:
    """Wraps a Chainer optimizer: rank 0's weights everywhere first, mean gradients every step.

    Attributes this class does not define are the wrapped optimizer's, read and written.
    """

    def __init__(self, actual_optimizer, comm):
        self.__dict__.update(actual_optimizer=actual_optimizer, comm=comm, broadcast_done=False)

    def setup(self, link):
        """Set up the wrapped optimizer on ``link``; returns this wrapper."""
        self.actual_optimizer.setup(link)
        return self

    def __getattr__(self, name):  # called only for names the wrapper does not have
        if name == "actual_optimizer":  # not set yet (while copying): no endless recursion
            raise AttributeError(name)
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name, value):  # e.g. a learning-rate schedule setting optimizer.lr
        if name in self.__dict__:
            self.__dict__[name] = value
        else:
            setattr(self.actual_optimizer, name, value)

    def update(self, lossfun=None, *args, **kwds):
        """One data-parallel step, called as ``chainer.Optimizer.update``.

        The first time, broadcast rank 0's parameters (before any forward pass). Then, if
        ``lossfun`` is given, compute ``loss = lossfun(*args, **kwds)``, clear the gradients and
        run ``loss.backward()``; average the gradients over the ranks; take the wrapped
        optimizer's step.
        """
        ### BEGIN SOLUTION
        model = self.actual_optimizer.target
        if not self.broadcast_done:
            for _, param in sorted(model.namedparams()):
                self.comm.mpi_comm.Bcast(param.array, root=0)
            self.broadcast_done = True
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            loss.backward()
        mean_gradients(self.comm, model)
        self.actual_optimizer.update()
        ### END SOLUTION


def create_multi_node_optimizer(actual_optimizer, comm):
    """Wrap ``actual_optimizer`` (SGD, Adam...) for data-parallel training over ``comm``."""
    return MultiNodeOptimizer(actual_optimizer, comm)
