# MUTANT: returns the course library's multi-node optimizer
# EXPECT: course library's version
import chainer


def create_multi_node_optimizer(actual_optimizer, comm):
    """Wrap ``actual_optimizer`` (SGD, Adam...) for data-parallel training over ``comm``."""
    from dlhack.parallel import create_multi_node_optimizer as library

    return library(actual_optimizer, comm)
