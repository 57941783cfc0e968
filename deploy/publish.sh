#!/bin/bash
# Publish the learners' copy of the course: lessons/ and labs/ of COURSE, as one new commit of
# PREFIX/learners.git on top of what learners already pulled (deploy/install.sh runs it).
#
#   deploy/publish.sh PREFIX [COURSE]    # COURSE: default PREFIX/course
#
# Only lessons/ and labs/ go in: never solutions/, mentors' guides or the graded tests. Each
# learner's server merges the new commit into ~/dlhack when it starts (nbgitpuller): files the
# learner did not touch are updated, new files appear, and where the learner changed a file the
# course changed too, the learner's lines win.
set -euo pipefail
prefix=${1:?usage: deploy/publish.sh PREFIX [COURSE]}
course=${2:-$prefix/course}
repo="$prefix/learners.git"
umask 022
[ -d "$repo" ] || git init -q --bare -b main "$repo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$work" init -q -b main
if git -C "$work" fetch -q "$repo" main 2>/dev/null; then
  git -C "$work" reset -q --soft FETCH_HEAD
fi
cp -r "$course/lessons" "$course/labs" "$work/"
git -C "$work" add -A lessons labs
git -C "$work" -c user.name=dlhack -c user.email=dlhack@localhost \
  commit -q --allow-empty -m "course published $(date -u +%FT%TZ)"
git -C "$work" push -q "$repo" main
# Git refuses to read a repository its user does not own ("dubious ownership") unless a
# protected config names it; the learners' servers point GIT_CONFIG_GLOBAL at this file when
# they pull (deploy/jupyterhub_config.py), so nothing is written to /etc/gitconfig.
printf '[safe]\n\tdirectory = %s\n' "$repo" >"$prefix/learners.gitconfig"
echo "publish: $(git -C "$repo" log -1 --format='%h %s') in $repo"
