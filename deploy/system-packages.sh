#!/bin/bash
# The system packages that `make test` needs, installed when this can be done, or one message.
#
#   deploy/system-packages.sh           # what `make test` runs first
#   deploy/system-packages.sh --check   # only say what is missing (exit 1 if anything is)
#
# What for: bubblewrap seals graded runs (src/dlhack/grade/sandbox.py); Chromium is the browser
# of tests/browser; slurm-wlm and munge make the private Slurm of tests/cluster/slurm.py; sudo
# is how the hub's batchspawner submits a learner's job as that learner; git carries the course
# to learners (nbgitpuller); configurable-http-proxy (npm) is JupyterHub's proxy; python3-venv
# makes the shared course environment of the cluster tests (tests/cluster/course_env.py).
# gcc compiles the grader's MPI profiling shim (src/dlhack/grade/pmpi.py), through the mpich
# wheel's mpicc, and the fused translator's elementwise kernels (src/dlhack/model/ckernels.py;
# without it they fall back to numpy, and tests/model/test_ckernels.py skips).
# As root, or with passwordless sudo, what is missing is installed with apt-get and npm (one
# `apt-get update` first; a few minutes on a fresh machine). Otherwise nothing is installed: one
# message lists what is missing and the command that installs it, and the exit status is 1.
set -u

# command -> Debian package; a command already on PATH needs nothing
declare -A PACKAGE=(
  [bwrap]=bubblewrap [slurmctld]=slurm-wlm [slurmd]=slurm-wlm [sbatch]=slurm-wlm
  [munged]=munge [sudo]=sudo [git]=git [gcc]=gcc [ip]=iproute2 [unshare]=util-linux [npm]=npm
)
missing_apt=()
for cmd in bwrap slurmctld slurmd sbatch munged sudo git gcc ip unshare npm; do
  command -v "$cmd" >/dev/null 2>&1 && continue
  pkg=${PACKAGE[$cmd]}
  [[ " ${missing_apt[*]} " == *" $pkg "* ]] || missing_apt+=("$pkg")
done
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
    && ! command -v google-chrome >/dev/null 2>&1; then
  missing_apt+=(chromium)
fi
# The shared course environment of the cluster tests is a venv of Debian's Python (learners
# cannot run a Python that lives in root's home): it needs the venv module.
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
  missing_apt+=(python3-venv)
fi
missing_npm=()
command -v configurable-http-proxy >/dev/null 2>&1 || missing_npm+=(configurable-http-proxy)

if [ ${#missing_apt[@]} -eq 0 ] && [ ${#missing_npm[@]} -eq 0 ]; then
  exit 0
fi
install_apt="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing_apt[*]}"
install_npm="npm install -g ${missing_npm[*]}"

sudo=""
if [ "${1:-}" = --check ]; then
  can_install=no
elif [ "$EUID" -eq 0 ]; then
  can_install=yes
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  can_install=yes sudo="sudo"
else
  can_install=no
fi

if [ "$can_install" = no ]; then
  {
    names=("${missing_apt[@]}")
    [ ${#missing_npm[@]} -gt 0 ] && names+=("${missing_npm[*]} (npm)")
    echo "make test needs system packages that are missing: ${names[*]}."
    echo "Install them as root, then run make test again:"
    steps=()
    [ ${#missing_apt[@]} -gt 0 ] && steps+=("sudo sh -c '$install_apt'")
    [ ${#missing_npm[@]} -gt 0 ] && steps+=("sudo $install_npm")
    printf '    %s\n' "${steps[@]}"
    echo "(As root, or with passwordless sudo, make test installs them itself.)"
  } >&2
  exit 1
fi

set -e
echo "system-packages: installing ${missing_apt[*]} ${missing_npm[*]}" >&2
if [ ${#missing_apt[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  # Debian starts a package's service only where an init system runs; the tests start their own.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null
fi
if [ ${#missing_npm[@]} -gt 0 ]; then
  $sudo npm install -g --no-fund --no-audit "${missing_npm[@]}" >/dev/null
fi
