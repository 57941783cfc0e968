"""Write the course's kernel, ``dlhack``, into an environment's ``share/jupyter/kernels``.

    python deploy/kernelspec.py PREFIX      # e.g. /opt/dlhack/venv (deploy/install.sh) or .venv

Every Jupyter server started from ``PREFIX/bin/python`` (a hub's single-user servers, ``dlhack
lab``, nbclient in the tests) finds the kernel there: it is the site's kernel, not a learner's.
Its ``env`` makes ``!dlhack run`` and ``!mpiexec`` in a cell find the course's commands first
(``PREFIX/bin`` before the rest of ``PATH``; jupyter_client fills in ``${PATH}`` when it starts
the kernel) and gives one BLAS thread per process, so that N ranks on N cores do not start N x N
threads. Costs nothing: one small JSON file.
"""
import argparse
import json
from pathlib import Path

NAME = "dlhack"
DISPLAY_NAME = "Python (dlhack)"
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def kernelspec(prefix):
    """The kernel.json of the course's kernel in the environment ``prefix``."""
    bindir = Path(prefix).resolve() / "bin"
    env = {"PATH": f"{bindir}:${{PATH}}"}
    env.update({name: "1" for name in ONE_THREAD})
    return {"argv": [str(bindir / "python"), "-m", "ipykernel_launcher", "-f",
                     "{connection_file}"],
            "display_name": DISPLAY_NAME, "language": "python", "env": env,
            "metadata": {"debugger": True}}


def install(prefix):
    """Write PREFIX/share/jupyter/kernels/dlhack/kernel.json; returns its path."""
    folder = Path(prefix) / "share" / "jupyter" / "kernels" / NAME
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernel.json"
    path.write_text(json.dumps(kernelspec(prefix), indent=1) + "\n")
    path.chmod(0o644)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prefix", type=Path, help="the environment (a venv's folder)")
    args = p.parse_args(argv)
    print(f"wrote {install(args.prefix)}")


if __name__ == "__main__":
    main()
