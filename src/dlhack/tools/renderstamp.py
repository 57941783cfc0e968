"""What a render's stamp records: the machine, the sections' times, the line a reader sees.

    stamp = {"machine": machine(), "sections": sections(nb, cell_seconds), ...}
    describe(stamp)     # the markdown line at the top of a rendered lesson

``dlhack.tools.render`` writes the stamp into ``metadata["dlhack"]["rendered"]``;
``dlhack.tools.mentors`` reads its ``sections`` for the guides' time tables. Reading the machine
costs a look at /proc/cpuinfo and threadpoolctl's list of loaded libraries.
"""
import os
import platform
import re
from pathlib import Path


def _cpu_model():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    found = re.search(r"^model name\s*:\s*(.+)$", text, flags=re.MULTILINE)
    return found.group(1).strip() if found else platform.machine()


def _blas():
    try:
        import numpy  # noqa: F401  (loads the BLAS that threadpoolctl then finds)
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            return f"{pool.get('internal_api')} {pool.get('version')} ({pool.get('architecture')})"
    return None


def _version(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def machine():
    """What ran the notebook, as a dict (no hostname)."""
    return {"cpu": _cpu_model(), "cores": os.cpu_count(),
            "os": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "numpy": _version("numpy"),
            "chainer": _version("chainer"), "blas": _blas()}


def heading(cell):
    """The title of a markdown cell that opens a section (``#`` or ``##``), else None."""
    if cell.get("cell_type") != "markdown":
        return None
    text = cell.get("source", "")
    first = ("".join(text) if isinstance(text, list) else text).lstrip().split("\n", 1)[0]
    found = re.match(r"(#{1,2})\s+(.+)", first)
    return found.group(2).strip() if found else None


def sections(nb, cell_seconds):
    """``[{"title", "seconds", "cells"}]``: each ``#``/``##`` section's code cells and run time.

    ``cell_seconds`` maps a code cell's index in ``nb`` to the seconds it ran. Cells before the
    first heading count towards a section called "setup".
    """
    found = [{"title": "setup", "seconds": 0.0, "cells": 0}]
    for index, cell in enumerate(nb["cells"]):
        title = heading(cell)
        if title:
            found.append({"title": title, "seconds": 0.0, "cells": 0})
        elif index in cell_seconds:
            found[-1]["seconds"] += cell_seconds[index]
            found[-1]["cells"] += 1
    kept = [s for s in found if s["title"] != "setup" or s["cells"]]
    return [{**s, "seconds": round(s["seconds"], 1)} for s in kept]


def describe(stamp):
    """The one line a reader sees at the top of a rendered lesson."""
    m = stamp["machine"]
    load = stamp["load_before"], stamp["load_after"]
    return (f"*Outputs rendered at full size on {m['cores']} cores of {m['cpu']} "
            f"({m['os']}; Python {m['python']}, numpy {m['numpy']}, Chainer {m['chainer']}, "
            f"{m['blas']}), {stamp['date']}, in {stamp['seconds'] / 60:.1f} min "
            f"(load average {load[0]:.1f} before, {load[1]:.1f} after), from a clean checkout "
            f"of commit {stamp['commit'][:12]}. Your own run will differ in its timings. "
            f"Re-render with `make lessons`.*")
