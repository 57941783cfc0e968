"""What a graded rank observed of learner code, in a closed format the checker can read safely.

    write(path, {"got": array, "x": x})       # in the rank (pytest_in_rank.py), as a test ends
    values = read(path)                        # in the checker (check_outside.py): never unpickles

A test's observe half hands the grader plain values: None, booleans, numbers, strings, lists
(tuples become lists), dicts with string keys, and numpy arrays of numbers or booleans. Anything
else becomes a :class:`Foreign` that only names its type (a ``chainer.Variable``, say), and what
is over the budget an :class:`Omitted` that says why; the check decides what either means.

The file: ``MAGIC``, the header's length (8 bytes, little-endian), the header (JSON), then every
array's bytes in C order. In the header a dict node is ``{"d": {...}}``, an array
``{"a": [index, dtype, shape]}``, a foreign value ``{"f": type name}`` and an omitted one
``{"o": why}``. Reading checks every length, dtype and shape against the file before a byte of it
is used, so a file that learner code wrote or changed can only fail to read (``ObservationError``).
Writing costs a copy of each array; reading, one read of the file. Standard library and numpy
only: the rank loads this file by its path.
"""
import json
import math
import os
import struct

import numpy as np

MAGIC = b"DLOBS1\n"
BUDGET = 16 << 20        # bytes of arrays one observation may hold; beyond: Omitted
MAX_ITEMS = 100_000      # elements of one list or dict; beyond: Omitted
MAX_DEPTH = 32           # nesting; beyond: Omitted
KINDS = "biufc"          # numpy dtype kinds allowed: bool, ints, floats, complex


class ObservationError(Exception):
    """An observation file that is not what the grader wrote: cut short, too big, malformed."""


class Foreign:
    """A value of a type the format does not carry; only its type's name is kept."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<a {self.type_name}>"

    def __eq__(self, other):
        return isinstance(other, Foreign) and other.type_name == self.type_name


class Omitted:
    """A value left out of the observation (too big, too deep), and why."""

    def __init__(self, why):
        self.why = why
        self.type_name = "value left out"

    def __repr__(self):
        return f"<left out: {self.why}>"


def _type_name(value):
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class _Encoder:
    def __init__(self, budget):
        self.arrays, self.left = [], budget

    def node(self, value, depth=0):
        if depth > MAX_DEPTH:
            return {"o": "nested too deeply"}
        if value is None or isinstance(value, (bool, str)):
            return value if not isinstance(value, str) or len(value) <= MAX_ITEMS else {
                "o": f"a string of {len(value)} characters"}
        if isinstance(value, (int, float)) and type(value) in (int, float):
            return value
        if isinstance(value, np.generic) and value.dtype.kind in KINDS:
            return self.node(np.asarray(value), depth)
        if isinstance(value, np.ndarray):
            return self.array(value)
        if type(value) in (list, tuple):
            if len(value) > MAX_ITEMS:
                return {"o": f"a {type(value).__name__} of {len(value)} items"}
            return [self.node(v, depth + 1) for v in value]
        if type(value) is dict and all(isinstance(k, str) for k in value):
            if len(value) > MAX_ITEMS:
                return {"o": f"a dict of {len(value)} items"}
            return {"d": {k: self.node(v, depth + 1) for k, v in value.items()}}
        return {"f": _type_name(value)}

    def array(self, value):
        if value.dtype.kind not in KINDS or value.dtype.fields is not None:
            return {"f": f"numpy.ndarray of dtype {value.dtype}"}
        if value.nbytes > self.left:
            return {"o": f"an array of {value.nbytes} bytes, over the grader's budget"}
        data = np.ascontiguousarray(value).view(np.ndarray)
        dtype = data.dtype.newbyteorder("<") if data.dtype.byteorder == ">" else data.dtype
        self.arrays.append(data.astype(dtype, copy=False).tobytes())
        self.left -= value.nbytes
        return {"a": [len(self.arrays) - 1, dtype.str, list(value.shape)]}


def encode(values, budget=BUDGET):
    """``(header bytes, [array bytes])`` of ``values`` (a dict with string keys)."""
    encoder = _Encoder(budget)
    header = json.dumps(encoder.node(dict(values))).encode()
    return header, encoder.arrays


def write(path, values, budget=BUDGET):
    """Write ``values`` to ``path`` through a temporary file: a reader never sees half of it."""
    header, arrays = encode(values, budget)
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<Q", len(header)) + header)
        for data in arrays:
            f.write(data)
    os.replace(tmp, path)


def read(path, limit=64 << 20):
    """The values written at ``path``; ObservationError when the file is not one of ours."""
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise ObservationError(f"it is {size} bytes, more than the {limit} an observation holds")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise ObservationError(f"it cannot be read ({err.strerror})") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
        raise ObservationError("it does not start as the grader's observations do")
    (length,) = struct.unpack_from("<Q", data, len(MAGIC))
    start = len(MAGIC) + 8
    if length > len(data) - start:
        raise ObservationError("its header is cut short")
    try:
        tree = json.loads(data[start:start + length])
    except (ValueError, RecursionError):
        raise ObservationError("its header is not valid JSON") from None
    decoder = _Decoder(memoryview(data)[start + length:])
    values = decoder.node(tree, top=True)
    if decoder.offset != len(decoder.body):
        raise ObservationError("it holds bytes that no array in it describes")
    return values


class _Decoder:
    def __init__(self, body):
        self.body, self.offset, self.next = body, 0, 0

    def node(self, node, top=False, depth=0):
        if depth > MAX_DEPTH + 1:
            raise ObservationError("it is nested too deeply")
        if isinstance(node, list) and not top:
            return [self.node(v, depth=depth + 1) for v in node]
        if not isinstance(node, dict):
            if top or not (node is None or isinstance(node, (bool, int, float, str))):
                raise ObservationError("its header holds something the grader never writes")
            return node
        if len(node) != 1 or (top and "d" not in node):
            raise ObservationError("its header holds something the grader never writes")
        (tag, value), = node.items()
        if tag == "d" and isinstance(value, dict):
            return {str(k): self.node(v, depth=depth + 1) for k, v in value.items()}
        if tag == "a":
            return self.array(value)
        if tag in ("f", "o") and isinstance(value, str):
            return Foreign(value) if tag == "f" else Omitted(value)
        raise ObservationError("its header holds something the grader never writes")

    def array(self, spec):
        try:
            index, dtype, shape = spec
            dtype = np.dtype(dtype)
            shape = tuple(int(n) for n in shape)
        except (TypeError, ValueError):
            raise ObservationError("an array in it is described wrongly") from None
        if (index != self.next or dtype.kind not in KINDS or dtype.fields is not None
                or any(n < 0 for n in shape) or len(shape) > 32):
            raise ObservationError("an array in it is described wrongly")
        nbytes = math.prod(shape) * dtype.itemsize
        if self.offset + nbytes > len(self.body):
            raise ObservationError("an array in it is cut short")
        array = np.frombuffer(self.body[self.offset:self.offset + nbytes], dtype).reshape(shape)
        self.offset, self.next = self.offset + nbytes, self.next + 1
        return array
