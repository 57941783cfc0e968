"""The ``dlhack`` command: one sub-command per module, each with its own ``main(argv)``.

    dlhack data make OUTDIR        # write the embedded corpus as train.en/train.ja/...
    dlhack train [--corpus DIR]    # train the translator (under mpiexec: data-parallel)
    dlhack grow --phases 1:2 2:1   # train on 1 rank, then resume on 2 (lesson 5)
    dlhack translate --model FILE "a sentence"
    dlhack demo                    # what `make demo` runs
    dlhack bench model|allreduce|scaling|corpus
    dlhack grade SUBMISSION.ipynb  # the autograder
    dlhack labs generate|check     # labs/ from solutions/
    dlhack doctor                  # is this environment ready for the course?
    dlhack lab                     # your copy of the lessons and labs, in JupyterLab (`make lab`)
    dlhack run -n 2 -- python script.py

Sub-commands are imported only when called, so a slow import in one never slows the others.
"""
import importlib
import sys

COMMANDS = {
    "data": ("dlhack.corpus.generate", "generate the embedded English-Japanese corpus"),
    "train": ("dlhack.train", "train the translator (data-parallel under mpiexec)"),
    "grow": ("dlhack.tools.grow", "train with a rank count that grows mid-run"),
    "translate": ("dlhack.translate", "translate sentences with a trained model"),
    "demo": ("dlhack.tools.demo", "the main job of `make demo`"),
    "bench": ("dlhack.bench", "benchmarks that print figures and write JSON"),
    "grade": ("dlhack.grade.cli", "grade lab submissions"),
    "labs": ("dlhack.grade.labs", "generate labs/ from solutions/, or check they are current"),
    "doctor": ("dlhack.tools.doctor", "check this environment and explain what to fix"),
    "run": ("dlhack.tools.launch", "run a command under mpiexec with rank-prefixed output"),
    "lab": ("dlhack.tools.workspace", "JupyterLab on your own copy of the lessons and labs"),
}


def usage():
    lines = ["usage: dlhack COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<10} {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "`dlhack COMMAND -h` for the arguments of one command."]
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"dlhack: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
