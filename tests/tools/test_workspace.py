"""``dlhack lab``: the learner's copy of lessons and labs, and the settings of the course's JupyterLab.

The browser test (tests/browser/) drives the real thing; these check each piece on its own.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from tornado.web import HTTPError

from dlhack.tools import workspace
from dlhack.tools.workspace import (
    ROOT,
    course_files,
    lab_command,
    make_workspace,
    refuse_outside_workspace,
)


def tree(root, files):
    for rel, text in files.items():
        path = Path(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def course(tmp_path):
    source = tmp_path / "repo"
    tree(source, {"lessons/00_a.ipynb": "lesson", "lessons/scripts/06/x_broken.py": "script",
                  "lessons/README.md": "[lab](../labs/01_b.ipynb)", "labs/01_b.ipynb": "lab",
                  # what notebooks write at run time: not course material
                  "labs/answers_01.py": "written by a cell", "lessons/result/plot.png": "png",
                  "labs/.ipynb_checkpoints/01_b-checkpoint.ipynb": "old",
                  "solutions/01_b.ipynb": "the answers"})
    return source


def test_the_copy_has_lessons_labs_and_scripts_only(course, tmp_path):
    copied, kept = make_workspace(tmp_path / "mywork", course)
    assert sorted(p.as_posix() for p in copied) == [
        "labs/01_b.ipynb", "lessons/00_a.ipynb", "lessons/README.md",
        "lessons/scripts/06/x_broken.py"]
    assert kept == []
    assert not (tmp_path / "mywork" / "solutions").exists()


def test_the_learners_work_is_never_overwritten_and_new_labs_arrive(course, tmp_path):
    mine = tmp_path / "mywork"
    make_workspace(mine, course)
    (mine / "labs" / "01_b.ipynb").write_text("my answers")
    (course / "labs" / "01_b.ipynb").write_text("the course changed")
    tree(course, {"labs/02_c.ipynb": "a new lab"})
    copied, kept = make_workspace(mine, course)
    assert [p.as_posix() for p in copied] == ["labs/02_c.ipynb"]
    assert len(kept) == 4
    assert (mine / "labs" / "01_b.ipynb").read_text() == "my answers"


def test_links_and_paths_of_the_real_course_work_in_the_copy(tmp_path):
    mine = tmp_path / "mywork"
    make_workspace(mine)
    assert (mine / "labs" / "02_collectives.ipynb").is_file()
    assert (mine / "lessons" / "scripts" / "06_debugging").is_dir()
    links = []
    for page in [*mine.glob("lessons/*.ipynb"), *mine.glob("*/README.md")]:
        links += [(page, m) for m in re.findall(r"\]\((\.\./labs/[^)#\s]+)", page.read_text())]
    assert links, "the lessons link to their labs"
    broken = [f"{page.name}: {link}" for page, link in links if not (page.parent / link).exists()]
    assert not broken, broken
    assert {p.as_posix() for p in course_files(ROOT)} == {
        p.relative_to(mine).as_posix() for p in mine.rglob("*") if p.is_file()}


def contents_manager(root):
    return types.SimpleNamespace(root_dir=str(root))


def test_saving_outside_the_copy_is_refused_with_the_way_out(tmp_path, monkeypatch):
    mine = tmp_path / "mywork"
    mine.mkdir()
    monkeypatch.setenv(workspace.ENV_WORKSPACE, str(mine))
    monkeypatch.delenv(workspace.ENV_EDIT_COURSE, raising=False)
    cm = contents_manager(tmp_path)
    refuse_outside_workspace({}, "mywork/labs/02_collectives.ipynb", cm)  # fine
    refuse_outside_workspace({}, "mywork/Untitled.ipynb", cm)
    for outside in ("labs/02_collectives.ipynb", "Untitled.ipynb", "mywork/../labs/x.ipynb"):
        with pytest.raises(HTTPError) as refused:
            refuse_outside_workspace({}, outside, cm)
        assert refused.value.status_code == 403
        assert "saves only inside your copy, mywork/" in refused.value.log_message
    monkeypatch.setenv(workspace.ENV_EDIT_COURSE, "1")  # instructors editing the course
    refuse_outside_workspace({}, "labs/02_collectives.ipynb", cm)
    monkeypatch.delenv(workspace.ENV_EDIT_COURSE)
    monkeypatch.delenv(workspace.ENV_WORKSPACE)  # a plain `jupyter lab`: no guard at all
    refuse_outside_workspace({}, "labs/02_collectives.ipynb", cm)


def test_the_lab_command_starts_at_the_root_on_the_copy_with_the_course_settings(tmp_path):
    cmd, env = lab_command(tmp_path, tmp_path / "mywork", ["--no-browser"])
    assert cmd[:2] == [str(Path(sys.executable).with_name("jupyter")), "lab"]
    assert f"--ServerApp.root_dir={tmp_path.resolve()}" in cmd
    assert "--LabApp.default_url=/lab/tree/mywork" in cmd and cmd[-1] == "--no-browser"
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(ROOT / "etc" / "jupyter")
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert env[workspace.ENV_WORKSPACE] == str((tmp_path / "mywork").resolve())
    with pytest.raises(SystemExit):
        lab_command(tmp_path / "a", tmp_path / "b")  # the copy must be under the root


def test_the_course_settings_hide_nbgrader_and_keep_one_kernel():
    server = json.loads((ROOT / "etc/jupyter/jupyter_server_config.json").read_text())
    assert server["KernelSpecManager"]["allowed_kernelspecs"] == ["dlhack"]
    assert server["MappingKernelManager"]["default_kernel_name"] == "dlhack"
    assert not any(server["ServerApp"]["jpserver_extensions"].values())
    hook = server["FileContentsManager"]["pre_save_hook"]
    module, _, name = hook.rpartition(".")
    assert getattr(__import__(module, fromlist=[name]), name) is refuse_outside_workspace
    page = json.loads((ROOT / "etc/jupyter/labconfig/page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyter/nbgrader": True}


def test_dlhack_lab_copy_only_says_where_the_copy_is(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dlhack.cli", "lab", "--copy-only",
                           "--root", str(tmp_path)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert f"Your copy of the lessons and labs: {(tmp_path / 'mywork').resolve()}/" in done.stdout
    assert (tmp_path / "mywork" / "labs" / "02_collectives.ipynb").is_file()


@pytest.mark.skipif(not (ROOT / ".git").exists() or not shutil.which("git"), reason="no git")
def test_git_ignores_the_copy():
    done = subprocess.run(["git", "check-ignore", "-q", "mywork/labs/02_collectives.ipynb"],
                          cwd=ROOT, timeout=30, check=False)
    assert done.returncode == 0
