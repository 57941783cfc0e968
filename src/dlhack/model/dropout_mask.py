"""A dropout mask kept as booleans: a quarter of a float32 mask's memory, the same products.

    mask = DropoutMask(keep, ratio)        # keep: a boolean array, True where a unit stays
    mask = draw(shape, ratio, key)         # or drawn: a hash of each position and a key
    y = dropped(x, mask)                   # x * keep / (1 - ratio), x's dtype
    y = dropped(x, float_mask)             # a plain (already scaled) array works as well

The fused translator (``dlhack.model.fused``) keeps one mask per LSTM layer above the first
until its backward: as float32 they are a (tokens, units) array each at the step's memory peak.
Costs: one pass more over x than a float mask (the scale is a second multiply, in place),
except where ``dlhack.model.ckernels`` builds its C: one pass then, with the same numbers.
"""
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels, kernels_for

# dropout_keep's hash (elementwise.c): position times an odd constant, the key xor-ed in, then
# MurmurHash3's finalizer: shifts and multipliers
SPREAD, FINALIZER = 0x9E3779B9, ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None))


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


def draw(shape, ratio, key):
    """A ``DropoutMask`` of ``shape`` (numpy) that drops units at ``ratio``: a unit is kept
    where a hash of its position and ``key`` (a 32-bit integer, new for every mask) is at least
    ``ratio`` of 2^32. One pass of ``elementwise.c`` where ``dlhack.model.ckernels`` builds it,
    else numpy's passes: the same mask either way, and no float drawn per unit."""
    n = int(np.prod(shape))
    if n >= 2 ** 32:
        raise ValueError(f"a dropout mask of {n} units: at most 2^32 - 1 (positions are 32-bit)")
    threshold = min(round(ratio * 2 ** 32), 2 ** 32 - 1)
    keep = np.empty(shape, bool)
    lib = kernels()
    if lib is not None:
        lib.dropout_keep(n, key, threshold, address(keep))
        return DropoutMask(keep, ratio)
    x = np.arange(n, dtype=np.uint32)
    x *= np.uint32(SPREAD)
    x ^= np.uint32(key)
    for shift, multiplier in FINALIZER:
        x ^= x >> np.uint32(shift)
        if multiplier is not None:
            x *= np.uint32(multiplier)
    np.greater_equal(x.reshape(shape), np.uint32(threshold), out=keep)
    return DropoutMask(keep, ratio)


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
