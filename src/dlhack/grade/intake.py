"""Before a notebook is read for its answers: is it a notebook the grader can grade, and for
which lab?

    lab, warnings = intake.check(path, labs, lab=None)   # SubmissionError when it cannot be graded

``schedule.grade_notebook`` calls this before ``notebook.from_notebook``. It says plainly when a
notebook is in the old format 3 (Jupyter before 2015) or is written for a language other than
Python (an R or Julia kernel), rather than "not a Jupyter notebook" or Python syntax errors.
The lab comes from ``--lab``, else the file's name, else its folder's name (both chosen where
the notebook is handed in), else the notebook's ``dlhack.lab`` metadata (which a copied notebook
carries along); when those disagree, a warning says which was used and why.
"""
import json
from pathlib import Path

from dlhack.grade.notebook import SubmissionError


def _metadata(path):
    """The notebook's JSON, or None when it cannot be read (read_notebook says why later)."""
    try:
        nb = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return nb if isinstance(nb, dict) else None


def _language(nb):
    meta = nb.get("metadata") or {}
    spec = meta.get("kernelspec") or {}
    info = meta.get("language_info") or {}
    language = spec.get("language") or info.get("name") or ""
    return str(language).lower(), str(spec.get("name") or spec.get("display_name") or "")


def name_lab(path, labs):
    """The lab the file's name (``02_collectives-tanaka.ipynb``) or its folder's name says."""
    matches = [name for name in labs if Path(path).name.startswith(name)]
    if matches:
        return max(matches, key=len)
    return Path(path).parent.name if Path(path).parent.name in labs else None


def check(path, labs, lab=None):
    """``(lab or None, warnings)`` for the notebook at ``path``; SubmissionError if ungradable."""
    nb = _metadata(path)
    if nb is None:
        return lab or name_lab(path, labs), []
    version = nb.get("nbformat")
    if isinstance(version, int) and version < 4:
        raise SubmissionError(
            f"{path} is a Jupyter notebook in the old format {version} (before 2015), which the "
            f"grader does not read: open it in JupyterLab and save it, which writes format 4")
    language, kernel = _language(nb)
    if language and language != "python":
        raise SubmissionError(
            f"{path} is a notebook for {language}"
            + (f" (kernel {kernel})" if kernel else "")
            + ", but the labs are graded as Python: start from the lab notebook in labs/ and "
              "keep its kernel, Python (dlhack)")
    meta_lab = ((nb.get("metadata") or {}).get("dlhack") or {}).get("lab")
    meta_lab = meta_lab if meta_lab in labs else None
    named = name_lab(path, labs)
    chosen = lab or named or meta_lab
    warnings, said = [], []
    if meta_lab:
        said.append(f"its metadata says {meta_lab}")
    if named:
        said.append(f"its name says {named}")
    if len({x for x in (lab, meta_lab, named) if x}) > 1:
        how = "--lab" if lab else "its name"
        warnings.append(f"which lab is {Path(path).name}? {' and '.join(said)}: graded as "
                        f"{chosen}, from {how}" + ("" if lab else "; pass --lab to choose"))
    return chosen, warnings
