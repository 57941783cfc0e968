"""The solution notebook in a real kernel (nbclient): ``check`` finds the answers through
IPython's linecache, and nbgrader awards each check cell its points from the value it returns.

(tests/course/test_notebooks.py runs every lab and solution top to bottom; this adds nbgrader's view.)
"""
import shutil

import nbclient
import nbformat
from nbgrader.utils import determine_grade

from tests.grade.gradetools import SOLUTION


def test_solution_check_cells_earn_their_points_as_nbgrader_reads_them(tmp_path):
    shutil.copy(SOLUTION, tmp_path)
    nb = nbformat.read(tmp_path / SOLUTION.name, as_version=4)
    nbclient.NotebookClient(nb, timeout=240, kernel_name="dlhack",  # the notebook's own kernel
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(checks) == 3
    for cell in checks:
        points = cell.metadata["nbgrader"]["points"]
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert not [o for o in cell.outputs
                    if o.output_type == "error" or o.get("name") == "stderr"], text
        assert determine_grade(cell) == (points, points), text
