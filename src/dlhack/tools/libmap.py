"""The README's map of the library, made from the modules themselves: one line per module.

    python -m dlhack.tools.libmap            # print the map
    python -m dlhack.tools.libmap --write    # put it into README.md, between the markers
    python -m dlhack.tools.libmap --check    # exit 1 if README.md's map is stale (a test runs it)

Each line is a module's path and the first line of its docstring, rooms in reading order (the
order of ``ROOMS``), so the map can never name a module that is gone or miss a new one.
"""
import argparse
import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
README = PACKAGE.parents[1] / "README.md"
BEGIN = "<!-- library map: made by `python -m dlhack.tools.libmap --write`; do not edit -->"
END = "<!-- end of library map -->"
# The learner's reading path first, then the machinery; a room is a folder or "" (top level).
ROOMS = ["corpus", "model", "", "parallel", "figures", "jobs", "tools", "grade", "bench"]
TOP_ORDER = ["bleu", "evaluation", "train", "step_profile", "report", "atomic", "snapshot",
             "translate", "cli"]


def summary(path, width=92):
    """The first sentence of a module's docstring, cut to ``width`` characters."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "(no docstring)"
    first = " ".join(doc.strip().split("\n\n")[0].split())
    sentence = first.split(". ")[0].rstrip(".:")
    return sentence if len(sentence) <= width else sentence[:width - 3].rstrip() + "..."


def modules(room):
    """The modules of one room, ``__init__`` first, then in reading order where one is set."""
    folder = PACKAGE / room if room else PACKAGE
    paths = sorted(folder.glob("*.py"))
    if not room:
        rank = {name: i for i, name in enumerate(TOP_ORDER)}
        paths = [p for p in paths if p.stem != "__init__"]
        return sorted(paths, key=lambda p: (rank.get(p.stem, len(rank)), p.stem))
    return sorted(paths, key=lambda p: (p.stem != "__init__", p.stem))


def make_map():
    """The map as lines of text, fenced as a code block."""
    rooms = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    paths = [PACKAGE / "__init__.py"]
    for room in ROOMS + sorted(rooms - set(ROOMS)):
        paths += modules(room)
    names = [path.relative_to(PACKAGE).as_posix() for path in paths]
    width = max(map(len, names))
    lines = ["```"]
    lines += [f"  {name:<{width}} {summary(path)}" for name, path in zip(names, paths)]
    lines.append("```")
    return lines


def replace_map(text, lines):
    """``text`` with the part between BEGIN and END replaced by ``lines``."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"README.md has no library map markers ({BEGIN!r} ... {END!r})")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlhack.tools.libmap", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-w", "--write", action="store_true", help="update README.md")
    parser.add_argument("-c", "--check", action="store_true", help="exit 1 if README.md is stale")
    parser.add_argument("--readme", default=str(README), help="the README to read or write")
    args = parser.parse_args(argv)
    lines = make_map()
    if not (args.write or args.check):
        print("\n".join(lines))
        return 0
    path = Path(args.readme)
    text = path.read_text(encoding="utf-8")
    new = replace_map(text, lines)
    if args.check:
        if new != text:
            print(f"{path}: the library map is stale; run python -m dlhack.tools.libmap --write")
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
