"""A dropout mask kept as booleans: a quarter of a float32 mask's memory, the same products.

    mask = DropoutMask(keep, ratio)        # keep: a boolean array, True where a unit stays
    y = dropped(x, mask)                   # x * keep / (1 - ratio), x's dtype
    y = dropped(x, float_mask)             # a plain (already scaled) array works as well

The fused translator (``dlhack.model.fused``) keeps one mask per LSTM layer above the first
until its backward: as float32 they are a (tokens, units) array each at the step's memory peak.
Costs: one pass more over x than a float mask (the scale is a second multiply, in place),
except where ``dlhack.model.ckernels`` builds its C: one pass then, with the same numbers.
"""
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels_for


class DropoutMask:
    """``keep`` (bool, any shape) and the scale ``1 / (1 - ratio)`` of the kept units; rows
    are taken with ``mask[rows]``."""

    def __init__(self, keep, ratio, scale=None):
        self.keep, self.ratio = keep, ratio
        self.scale = np.float32(1 / (1 - ratio)) if scale is None else scale

    def __getitem__(self, rows):
        return DropoutMask(self.keep[rows], self.ratio, self.scale)

    @property
    def shape(self):
        return self.keep.shape


def dropped(x, mask, out=None):
    """``x`` times the mask (into ``out``, which may be ``x``): a ``DropoutMask`` or an array
    already scaled."""
    xp = backend.get_array_module(x)
    if not isinstance(mask, DropoutMask):
        return xp.multiply(x, mask, out=out)
    lib = kernels_for(x)
    if lib is not None and mask.shape == x.shape and x.flags.c_contiguous \
            and mask.keep.flags.c_contiguous and (out is None or out.flags.c_contiguous):
        out = np.empty_like(x) if out is None else out  # one pass (dlhack.model.ckernels)
        lib.dropout_apply(x.size, address(x), address(mask.keep), mask.scale, address(out))
        return out
    out = xp.multiply(x, mask.keep, out=out)  # float times bool: x's dtype
    out *= mask.scale.astype(out.dtype)
    return out
