"""Make the learner's lab notebooks from the solutions, or check that they are current.

    dlhack labs generate [NAME ...]   # solutions/NAME.ipynb -> labs/NAME.ipynb (`make labs`)
    dlhack labs check                 # exit 1, naming every stale, missing or orphaned lab

Only solutions/ is written by hand. A lab is its solution put through nbgrader's own
preprocessors: ClearSolutions (the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
becomes ``raise NotImplementedError()``; signature and docstring stay) and ClearOutput (no
outputs, no execution counts). nbformat writes sorted-key JSON, so the bytes depend on the
solution alone and ``check`` can compare them exactly.
"""
import argparse
import sys
from pathlib import Path

from dlhack.grade.plan import repo_root


def render(solution):
    """The lab notebook made from the solution notebook at ``solution``, as text."""
    import nbformat
    from nbgrader.preprocessors import ClearOutput, ClearSolutions

    nb = nbformat.read(str(solution), as_version=4)
    for preprocessor in (ClearSolutions(), ClearOutput()):
        nb, _ = preprocessor.preprocess(nb, {})
    return nbformat.writes(nb) + "\n"


def _pairs(root, names=None):
    solutions = sorted((Path(root) / "solutions").glob("*.ipynb"))
    return [(s, Path(root) / "labs" / s.name) for s in solutions if not names or s.stem in names]


def generate(root=None, names=None):
    """Write labs/NAME.ipynb for each solutions/NAME.ipynb; returns the paths written."""
    written = []
    for solution, lab in _pairs(root or repo_root(), names):
        text = render(solution)
        if not lab.exists() or lab.read_text(encoding="utf-8") != text:
            lab.parent.mkdir(exist_ok=True)
            lab.write_text(text, encoding="utf-8")
            written.append(lab)
    return written


def problems(root=None):
    """``[(lab path, what is wrong)]``: labs that differ from their solution, or lack one."""
    root = Path(root or repo_root())
    found = []
    for solution, lab in _pairs(root):
        if not lab.exists():
            found.append((lab, "missing"))
        elif lab.read_text(encoding="utf-8") != render(solution):
            found.append((lab, f"stale: differs from what {solution.relative_to(root)} makes"))
    solved = {s.name for s, _ in _pairs(root)}
    for lab in sorted((root / "labs").glob("*.ipynb")):
        if lab.name not in solved:
            found.append((lab, "orphaned: no solutions/ notebook makes it"))
    return found


def main(argv=None):
    """``dlhack labs generate|check``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="dlhack labs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["generate", "check"],
                        help="generate: write labs/ from solutions/; check: fail if labs/ is stale")
    parser.add_argument("names", nargs="*", metavar="NAME", help="labs to generate (default: all)")
    parser.add_argument("-r", "--root", type=Path, default=None,
                        help="the repository (default: this checkout, or $DLHACK_ROOT)")
    args = parser.parse_args(argv)
    root = args.root or repo_root()
    if args.action == "generate":
        for path in generate(root, args.names):
            print(f"wrote {path}")
        return 0
    found = problems(root)
    for path, why in found:
        print(f"{path}: {why}")
    if found:
        print("run `make labs` (dlhack labs generate) and commit labs/")
        return 1
    print(f"labs/ is up to date with solutions/ ({len(_pairs(root))} labs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
