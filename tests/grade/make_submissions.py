"""Write the planted submissions in tests/grade/submissions/02_collectives/ (committed as data).

    python -m tests.grade.make_submissions

Each is solutions/02_collectives.ipynb with one answer cell changed (the body of its function
replaced, or code added before it), or a notebook broken on purpose. test_planted.py says what
each deserves. The cheats only touch the grader's temporary directories: they must never
damage the machine that runs the tests.
"""
import copy
import json
from pathlib import Path

from tests.grade import attacks
from tests.support import ROOT

OUT = Path(__file__).with_name("submissions") / "02_collectives"

WRONG_MEAN = '''
    flat = np.concatenate([np.ravel(g) for g in grads])
    total = allreduce_ring(comm, flat)  # planted: forgot to divide by comm.size
    out, start = [], 0
    for g in grads:
        out.append(total[start:start + g.size].reshape(g.shape).astype(g.dtype))
        start += g.size
    return out
'''
# A ring whose allgather thinks in pairs of ranks: right at 1, 2 and 4 ranks; at 3 it runs one
# step short, and one chunk never reaches every rank.
ODD_RANKS = '''
    rank, size = comm.rank, comm.size
    flat = np.array(x, copy=True).ravel()
    chunks = np.array_split(flat, size)
    right, left = (rank + 1) % size, (rank - 1) % size
    for step in range(size - 1):  # reduce-scatter
        send, recv = (rank - step) % size, (rank - step - 1) % size
        buf = np.empty_like(chunks[recv])
        comm.Sendrecv(chunks[send], dest=right, recvbuf=buf, source=left)
        chunks[recv] += buf
    for step in range(2 * (size // 2) - 1):  # planted: allgather steps for an even ring only
        send, recv = (rank - step + 1) % size, (rank - step) % size
        comm.Sendrecv(chunks[send], dest=right, recvbuf=chunks[recv], source=left)
    return flat.reshape(np.shape(x))
'''
# Lines of the solution's allreduce_naive, and what a plant puts in their place.
NAIVE_START = "    total = np.array(x, copy=True)\n"
DEADLOCK = NAIVE_START + (
    "    if comm.rank == comm.size - 1:\n"
    "        return total  # planted: the last rank skips the exchange; rank 0 waits for it forever\n")
NAIVE_ADD = "            comm.Recv(buf, source=src)\n            total += buf\n"
NO_ADD = "            comm.Recv(buf, source=src)  # planted: the received array is never added\n"
# The last rank's right-hand neighbour is `size`, which does not exist: MPI raises there only.
ONE_RANK_RAISES = '''
    rank, size = comm.rank, comm.size
    flat = np.array(x, copy=True).ravel()
    chunks = np.array_split(flat, size)
    right, left = rank + 1, (rank - 1) % size  # planted: right is not taken modulo size
    for step in range(size - 1):
        send, recv = (rank - step) % size, (rank - step - 1) % size
        buf = np.empty_like(chunks[recv])
        comm.Sendrecv(chunks[send], dest=right, recvbuf=buf, source=left)
        chunks[recv] += buf
    for step in range(size - 1):
        send, recv = (rank - step + 1) % size, (rank - step) % size
        comm.Sendrecv(chunks[send], dest=right, recvbuf=chunks[recv], source=left)
    return flat.reshape(np.shape(x))
'''
INFINITE_LOOP = '''
    flat = np.concatenate([np.ravel(g) for g in grads])
    mean = allreduce_ring(comm, flat) / comm.size
    out, start, i = [], 0, 0
    while i < len(grads):
        g = grads[i]
        if len(out) == i:
            out.append(mean[start:start + g.size].reshape(g.shape).astype(g.dtype))
            start += g.size
        # planted: i is never advanced, so the loop never ends
    return out
'''
ABORT = '''
    import os

    if comm.rank == comm.size - 1:
        os.abort()  # planted: a hard crash on one rank
    return np.array(x, copy=True)
'''
MEMORY_HOG = '''
    hoard = []
    while True:  # planted: keeps 80 MB arrays until memory runs out
        hoard.append(np.ones(10**7))
'''
OVERWRITE_TESTS = '''
import os
import sys

# planted cheat: rewrite every test module this process loaded into one that always passes
for _module in list(sys.modules.values()):
    _path = getattr(_module, "__file__", None) or ""
    if os.path.basename(_path).startswith(("test_", "conftest", "labtools", "collectives")):
        with open(_path, "w") as _f:
            _f.write("def test_pass():\\n    pass\\n")
'''
FORGE_RESULT = '''
import json
import os
import tempfile

# planted cheat: write passing result files wherever a grader might look (inside the temporary
# directory only: this is test data), then leave before any test can fail
_places = {os.getcwd(), os.path.dirname(os.getcwd())}
for _entry in open("/proc/self/environ", "rb").read().split(b"\\0"):
    _value = _entry.partition(b"=")[2].decode(errors="ignore")
    _tmp = tempfile.gettempdir()
    if os.path.isdir(_value) and _value.startswith(_tmp) and _value != _tmp:
        _places.add(_value)
for _place in _places:
    for _rank in range(8):
        _fake = {"rank": _rank, "outcome": "passed", "message": "", "mac": "0" * 64}
        # the grader's names (result.RANK.TEST.json, one per test of a launch), and guesses
        for _name in [f"result.{_rank}.{_i}.json" for _i in range(8)] + [
                f"result.{_rank}.json", "result.json", "results.json"]:
            try:  # a folder it cannot write (read-only) is skipped, not fatal
                with open(os.path.join(_place, _name), "w") as _f:
                    json.dump(_fake, _f)
            except OSError:
                pass
os._exit(0)
'''
STUB = '''
    raise NotImplementedError()
'''


def load_solution():
    return json.loads((ROOT / "solutions" / "02_collectives.ipynb").read_text())


def answer_cell(nb, grade_id):
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(grade_id)


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def fenced(cell):
    """``(head, body, tail)``: the code between the solution fences of an answer cell."""
    head, rest = source(cell).split("    ### BEGIN SOLUTION\n")
    body, tail = rest.split("    ### END SOLUTION")
    return head, body, tail


def replace_body(nb, grade_id, body):
    """Swap the code between the solution fences of one answer cell (the fences go too)."""
    cell = answer_cell(nb, grade_id)
    head, _, tail = fenced(cell)
    cell["source"] = head + body.strip("\n") + "\n" + tail.lstrip("\n")


def edit_body(nb, grade_id, old, new):
    """``replace_body`` with the solution's own body, ``old`` replaced by ``new`` in it."""
    body = fenced(answer_cell(nb, grade_id))[1]
    assert old in body, f"{grade_id}'s solution no longer holds {old!r}"
    replace_body(nb, grade_id, body.replace(old, new))


def substitute(nb, grade_id, old, new):
    cell = answer_cell(nb, grade_id)
    cell["source"] = source(cell).replace(old, new)


def prepend(nb, grade_id, code):
    cell = answer_cell(nb, grade_id)
    cell["source"] = code.strip("\n") + "\n\n" + source(cell)


def append(nb, grade_id, code):
    cell = answer_cell(nb, grade_id)
    cell["source"] = source(cell).rstrip("\n") + "\n\n\n" + code.strip("\n") + "\n"


def set_metadata(nb, key, value):
    nb["metadata"][key] = value


def old_format(nb):
    """The notebook as nbformat 3 writes it: cells inside worksheets."""
    cells = nb.pop("cells")
    nb.update(nbformat=3, nbformat_minor=0, worksheets=[{"cells": cells, "metadata": {}}])


def planted():
    """``{name: notebook dict or raw text}``."""
    made = {}

    def variant(name, *edits):
        nb = copy.deepcopy(load_solution())
        for edit, *args in edits:
            edit(nb, *args)
        made[name] = nb

    variant("wrong_mean", (replace_body, "average_gradients", WRONG_MEAN))
    variant("odd_ranks", (replace_body, "allreduce_ring", ODD_RANKS))
    variant("deadlock", (edit_body, "allreduce_naive", NAIVE_START, DEADLOCK))
    variant("one_rank_raises", (replace_body, "allreduce_ring", ONE_RANK_RAISES))
    variant("infinite_loop", (replace_body, "average_gradients", INFINITE_LOOP))
    variant("abort", (replace_body, "allreduce_ring", ABORT))
    variant("memory_hog", (replace_body, "allreduce_naive", MEMORY_HOG))
    answers = ("allreduce_naive", "allreduce_ring", "average_gradients")
    stubs = [(replace_body, name, STUB) for name in answers]
    variant("overwrite_tests", (prepend, "allreduce_naive", OVERWRITE_TESTS), *stubs)
    variant("forge_result", (prepend, "allreduce_naive", FORGE_RESULT), *stubs)
    variant("renamed", (substitute, "allreduce_ring", "def allreduce_ring(", "def ring_allreduce("))
    variant("syntax_error", (substitute, "allreduce_ring", "range(size - 1):  # allgather",
                             "range(size - 1)  # allgather"))
    variant("missing_import", (prepend, "allreduce_naive", "import torch  # not installed"))
    naive = "allreduce_naive"
    no_add = (edit_body, naive, NAIVE_ADD, NO_ADD)  # right traffic, wrong sum
    variant("wrong_naive", no_add)
    variant("saboteur", (prepend, naive, attacks.SABOTEUR))
    variant("forger", (prepend, naive, attacks.FORGER))
    variant("frame_key", (prepend, naive, attacks.FRAME_KEY), *stubs)
    variant("gc_recorder", (prepend, naive, attacks.GC_RECORDER), no_add)
    variant("patch_numpy", (prepend, naive, attacks.PATCH_NUMPY), no_add)
    variant("poison", (prepend, naive, attacks.POISON), no_add)
    variant("escape", (prepend, naive, attacks.ESCAPE))
    variant("keyboard_interrupt", (replace_body, naive, attacks.KEYBOARD_INTERRUPT))
    variant("pytest_exit", (prepend, naive, attacks.PYTEST_EXIT))
    variant("read_solution", (replace_body, naive, STUB), (append, naive, attacks.READ_SOLUTION))
    variant("flood", (prepend, naive, attacks.FLOOD))
    variant("nbformat3", (old_format,))
    variant("r_kernel", (set_metadata, "kernelspec", {"display_name": "R", "language": "R",
                                                      "name": "ir"}),
            (set_metadata, "language_info", {"name": "R"}))
    variant("lab_mismatch", (set_metadata, "dlhack", {"lab": "05_large_batch"}))
    text = json.dumps(load_solution(), indent=1)
    made["not_json"] = text[: len(text) // 2]  # a notebook cut off halfway through saving
    return made


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, nb in planted().items():
        if not isinstance(nb, str):
            nb = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        text = nb
        (OUT / f"{name}.ipynb").write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name}.ipynb")


if __name__ == "__main__":
    main()
