"""What a rendered lesson's outputs look like to a reader, and what must never be in them.

    from dlhack.tools import outputs
    outputs.clean(nb)            # in place: streams as JupyterLab shows them, no timing metadata
    outputs.problems(nb, name)   # [] when every output reads cleanly

A kernel sends a progress bar as many small stream messages, each redrawing the line after a
carriage return; JupyterLab joins the messages of one stream and shows only what follows the
last ``\\r`` of each line. ``clean`` does the same once, so the committed notebook holds what a
reader sees (lesson 1's training used to be 96 fragments on one line). Terminal escape codes
(Chainer's ``PrintReport`` writes ``ESC[J`` to clear the screen) mean nothing in a notebook and
are dropped. ``problems`` is the check ``tests/course`` holds every committed render to.
"""
import re

# CSI sequences (ESC [ ... final byte: colours, cursor moves, ESC[J) and two-byte escapes.
ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# Where a render must not look: the course's shared folder beside the repository (the real
# corpus and other data that a learner's machine does not have).
OUTSIDE = re.compile(r"shared/data")


def text_of(output):
    """The text of a stream output (nbformat keeps it as a string or a list of lines)."""
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def collapse(text):
    """What a terminal finally shows of ``text``: escape codes dropped, each line from its last
    carriage return on (a ``\\r`` that ends a line before ``\\n`` erases nothing)."""
    lines = ESCAPE.sub("", text).replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


def merge_streams(outputs):
    """``outputs`` with each run of stream outputs of one name joined into one, in order."""
    merged = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream" and last.get("name") == output.get("name")):
            last["text"] = text_of(last) + text_of(output)
        else:
            if output.get("output_type") == "stream":
                output["text"] = text_of(output)
            merged.append(output)
    return merged


def clean(nb):
    """Streams as JupyterLab shows them, and no per-cell timing metadata; returns ``nb``."""
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        if "outputs" not in cell:
            continue
        cell["outputs"] = merge_streams(cell["outputs"])
        for output in cell["outputs"]:
            if output.get("output_type") == "stream":
                output["text"] = collapse(text_of(output))
    return nb


def problems(nb, name):
    """What a reader should not see in notebook ``nb``'s outputs (called ``name``); [] if none."""
    found = []
    for index, cell in enumerate(nb["cells"]):
        previous = None
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                text = text_of(output)
                where = f"{name}: cell {index}"
                if ESCAPE.search(text):
                    found.append(f"{where}: a terminal escape code {ESCAPE.search(text)[0]!r}")
                if "\r" in text:
                    found.append(f"{where}: a carriage return left in a stream (a progress bar "
                                 "not collapsed)")
                if previous == output.get("name"):
                    found.append(f"{where}: {output.get('name')} split into fragments")
                if OUTSIDE.search(text):
                    found.append(f"{where}: output from outside the repository "
                                 f"({OUTSIDE.search(text)[0]}): render without ../shared")
            previous = output.get("name") if kind == "stream" else None
    return found
