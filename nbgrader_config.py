"""nbgrader settings for instructors who grade with nbgrader itself (`nbgrader autograde`).

Solutions are the source folder and labs the release folder. A lab's check cell runs several
short MPI jobs through `dlhack.grade.check`, so a cell may take longer than nbgrader's default
30 s on a busy grading machine.

A check cell's value is its score: under nbgrader (which sets NBGRADER_EXECUTION while it
executes a notebook) `check` returns the points as a plain float, which nbgrader reads as partial
credit; in the learner's JupyterLab the same value is not displayed. See
src/dlhack/grade/checkcell.py. The notebooks run on the course's kernel, `dlhack` (`make venv`
installs it).

The learners' JupyterLab (`make lab`) hides nbgrader's own tools; see etc/jupyter/README.md.
"""
c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "labs"
c.Execute.timeout = 180
