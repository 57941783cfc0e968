"""Write what the lessons' renders printed into the mentors' guides (and the README), by marker.

    python -m dlhack.tools.mentors            # fill every marked block (`make lessons` runs it)
    python -m dlhack.tools.mentors --check    # exit 1 when a block is stale or quotes nothing

A guide never types a figure that a lesson measured: it quotes the committed render. Two
markers, each closed by ``<!-- end -->``; what lies between them is generated:

- ``<!-- quote 02 naive/ring -->``: the output lines of lesson 02's render that the regular
  expression after the number matches (``[rank]`` marks removed; at most ``MAX_LINES``), in a
  text block, with the commit and date of the render;
- ``<!-- times 02 -->``: the seconds each section of lesson 02 took in its render (what
  ``dlhack.tools.render`` records), and ``<!-- times all -->``: one line per lesson.

These are render times on the rendering machine, not times in a room. Cost: reading the
lessons' JSON once.
"""
import argparse
import json
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = ("mentors/*.md", "README.md")
BLOCK = re.compile(r"(<!-- (quote|times) (\S+)(?: ([^\n]+?))? -->\n)(.*?)(<!-- end -->)",
                   re.DOTALL)
RANK_MARK = re.compile(r"^\[\d+\] ")
MAX_LINES = 8


@cache
def lesson(number):
    """The committed notebook of lesson ``number`` (``"02"``), as a dict."""
    (path,) = (ROOT / "lessons").glob(f"{number}_*.ipynb")
    return json.loads(path.read_text(encoding="utf-8"))


def stamp(number):
    return lesson(number).get("metadata", {}).get("dlhack", {}).get("rendered") or {}


def output_lines(nb):
    """``(cell index, line)`` for every line a notebook's outputs show (streams and plain-text
    values), each without the ``[rank]`` mark of a ``%%mpiexec`` or ``dlhack run`` line."""
    found = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            text = output.get("text") if output.get("output_type") == "stream" else \
                output.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else (text or "")
            found += [(index, RANK_MARK.sub("", line).rstrip()) for line in text.splitlines()]
    return found


def provenance(number):
    rendered = stamp(number)
    commit = (rendered.get("commit") or "?").split()[0]
    return (f"*(lesson {number}'s committed render: commit {commit[:12]}, {rendered.get('date')}; "
            f"`python -m dlhack.tools.mentors` copies it here)*")


def quote(number, pattern):
    """The block for ``<!-- quote NUMBER PATTERN -->``, and what is wrong with it (or None)."""
    lines = [line for _, line in output_lines(lesson(number)) if re.search(pattern, line)]
    if not lines:
        return ((f"**Not in the render**: no output line of lesson {number} matches "
                f"`{pattern}`.\n"), f"quote {number} {pattern!r}: no output line matches")
    body = "\n".join(lines[:MAX_LINES])
    return f"```text\n{body}\n```\n{provenance(number)}\n", None


def times(number):
    """The block for ``<!-- times NUMBER -->`` (or ``all``)."""
    if number == "all":
        rows = ["| lesson | render time | longest section |", "|---|---|---|"]
        for path in sorted((ROOT / "lessons").glob("*.ipynb")):
            n = path.stem[:2]
            rendered, sections = stamp(n), stamp(n).get("sections") or []
            longest = max(sections, key=lambda s: s["seconds"], default=None)
            rows.append(f"| {path.stem} | {rendered.get('seconds', 0) / 60:.1f} min | "
                        + (f"{longest['title']}: {longest['seconds']:.0f} s |" if longest
                           else "not recorded: re-render |"))
        return "\n".join(rows) + "\n", None
    rendered = stamp(number)
    sections = rendered.get("sections")
    if not sections:
        return ((f"Not recorded: lesson {number}'s render predates section times "
                "(`make lessons` records them).\n"), None)
    rows = ["| section | code cells | seconds |", "|---|---|---|"]
    rows += [f"| {s['title']} | {s['cells']} | {s['seconds']:.0f} |" for s in sections]
    machine = rendered.get("machine", {})
    note = (f"Render time, not room time: {rendered.get('seconds', 0) / 60:.1f} min in all on "
            f"{machine.get('cores')} cores of {machine.get('cpu')} (load average "
            f"{rendered.get('load_before')} before); {provenance(number)}")
    return "\n".join(rows) + "\n\n" + note + "\n", None


def fill(text):
    """``text`` with every marked block regenerated, and the problems found on the way."""
    found = []

    def block(match):
        opening, kind, number, pattern, _old, end = match.groups()
        if kind == "quote":
            body, problem = quote(number, pattern or ".")
        else:
            body, problem = times(number)
        if problem:
            found.append(problem)
        return opening + body + end

    return BLOCK.sub(block, text), found


def documents():
    return sorted(p for pattern in DOCUMENTS for p in ROOT.glob(pattern))


def main(argv=None):
    """The command line: fill every block, or --check that each is current and finds lines."""
    parser = argparse.ArgumentParser(prog="python -m dlhack.tools.mentors", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--check", action="store_true",
                        help="write nothing; exit 1 when a block is stale or quotes nothing")
    args = parser.parse_args(argv)
    problems = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        new, found = fill(text)
        rel = path.relative_to(ROOT)
        problems += [f"{rel}: {p}" for p in found]
        if new != text:
            if args.check:
                problems.append(f"{rel}: a quoted block is stale: run "
                                "`python -m dlhack.tools.mentors`")
            else:
                path.write_text(new, encoding="utf-8")
                print(f"updated {rel}")
    print("\n".join(problems) or "every quoted block is current")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
