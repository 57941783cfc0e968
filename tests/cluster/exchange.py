"""nbgrader's exchange for the hand-in tests: a private exchange, the instructor's course folder,
and commands run as the instructor (root) or as a learner.

    with Exchange() as ex:                     # a fresh exchange folder, as /srv/nbgrader/exchange
        ex.release(course, LAB, SOLUTION)      # generate_assignment + release_assignment
        ex.nbgrader(course, "collect", LAB)    # any nbgrader command on the course, as root
        as_learner(learners, name, "ls", ...)  # a command as that Unix learner, from their home

Used by tests/cluster/test_handin.py (without a browser) and
tests/browser/test_handin_in_browser.py (from the learners' JupyterLab on the hub).
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

COURSE_ID = "dlhack"


class Exchange:
    """A private nbgrader exchange folder; removed on exit."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="dlhack-exchange-"))
        self.root.chmod(0o755)  # as /srv/nbgrader/exchange: everyone may enter, nbgrader sets the rest

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def options(self):
        """What a learner's ``dlhack submit`` needs to find this exchange."""
        return [f"--course={COURSE_ID}", f"--exchange={self.root}"]

    def nbgrader(self, course, *args):
        """``nbgrader ARGS`` in the course folder ``course``, as this process's user."""
        proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--course={COURSE_ID}",
                               f"--Exchange.root={self.root}"], cwd=course, text=True,
                              capture_output=True, timeout=600, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def release(self, course, lab, solution):
        """The lab into ``course/source/LAB/LAB.ipynb``, generated and released to learners."""
        (course / "source" / lab).mkdir(parents=True)
        shutil.copyfile(solution, course / "source" / lab / f"{lab}.ipynb")
        self.nbgrader(course, "generate_assignment", lab, "--force")
        self.nbgrader(course, "release_assignment", lab)


def as_learner(learners, name, *argv, check=True):
    """``argv`` run as the Unix learner ``name``, from their home; the finished process."""
    home = learners.home(name)
    proc = subprocess.run(["runuser", "-u", name, "--", "env", f"HOME={home}", *argv],
                          cwd=home, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0 or not check, proc.stdout + proc.stderr
    return proc
