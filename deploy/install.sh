#!/bin/bash
# The course on a cluster, built once by the admin: the shared environment every learner's
# server and kernel runs from, and the learners' copy of the course. Read deploy/README.md.
#
#   deploy/install.sh /opt/dlhack                      # from a checkout of the course, as admin
#   PYTHON=/usr/bin/python3.11 deploy/install.sh /opt/dlhack
#
# Makes, under PREFIX (to be readable by every learner and writable by the admin only):
#   course/        the course without what learners must not see (solutions/, mentors/, the
#                  repository's own tests/, .git): src/, the graded tests graded/ the check
#                  cells run, the JupyterLab settings etc/jupyter/, jobs/
#   venv/          Python with dlhack installed from course/ (editable: the grader finds
#                  course/graded beside its code) and the `lab` extra: JupyterLab, the
#                  hub's single-user server, batchspawner, nbgitpuller; the site kernel
#                  `dlhack` in venv/share/jupyter/kernels (deploy/kernelspec.py)
#   learners.git   the learners' copy: lessons/ and labs/ only, one commit per run of this
#                  script; each learner's server pulls it into ~/dlhack with nbgitpuller
#                  (learners.gitconfig beside it lets git read it as another user's)
# Run it again after changing the course: course/ and venv/ are updated in place, and a new
# commit reaches each learner at their next server start, merged with their own changes.
# Costs: ~800 MB and 1-3 minutes from a package mirror (Chainer is built once, then cached).
set -euo pipefail
prefix=${1:?usage: deploy/install.sh PREFIX}
python=${PYTHON:-python3}
src=$(cd "$(dirname "$0")/.." && pwd)
umask 022
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# 1. course/: the files git tracks (or would), less what only instructors may read; built
# beside the old one and swapped in, so it never holds a file the course no longer has.
course="$prefix/course"
rm -rf "$course.new" "$course.old"
mkdir -p "$course.new"
(cd "$src" && git ls-files -co --exclude-standard -z) | while IFS= read -r -d '' f; do
  case $f in
    solutions/* | mentors/* | .ci/* | bench/*) continue ;;
    tests/*) continue ;;
  esac
  [ -f "$src/$f" ] && (cd "$src" && cp --parents -p -- "$f" "$course.new/")
done
[ -d "$course" ] && mv "$course" "$course.old"
mv "$course.new" "$course"
rm -rf "$course.old"

# 2. venv/: the course's Python, with the site kernel.
venv="$prefix/venv"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$course/constraints.txt")
"${pip[@]}" --upgrade pip setuptools wheel
"${pip[@]}" --no-build-isolation -e "$course[lab]"
"$venv/bin/python" "$course/deploy/kernelspec.py" "$venv"
# JupyterLab's defaults for everyone: no pop-up asking to fetch Jupyter's news from the internet.
mkdir -p "$venv/share/jupyter/lab/settings"
cat >"$venv/share/jupyter/lab/settings/overrides.json" <<'JSON'
{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}
JSON

# 3. learners.git: lessons/ and labs/, committed on top of what learners already have.
"$course/deploy/publish.sh" "$prefix"
echo "install: course in $course, environment in $venv, learners' copy in $prefix/learners.git"
