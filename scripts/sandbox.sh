#!/usr/bin/env bash
# Debian's bubblewrap for the code sandbox (sieval/scoring/sandbox/, docs/code-execution.md) and
# its tests (tests/scoring/test_sandbox*.py); setpriv comes with util-linux, which Debian always
# has. As root sieval runs bwrap-root; an ordinary user gets bwrap-userns where the kernel lets
# ordinary users make user namespaces (the script says whether it does).
#
#   scripts/sandbox.sh        install /usr/bin/bwrap when it is missing; print its version
#
# Idempotent: with bwrap present it only prints the version. The package lists are refreshed
# (apt-get update) only when the install fails without them. Installing needs root, as on CI.
set -euo pipefail

if ! command -v bwrap >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  install() { apt-get install -y --no-install-recommends bubblewrap; }
  if ! install; then
    echo "sandbox.sh: install failed; refreshing the package lists and trying again" >&2
    apt-get update
    install
  fi
fi
bwrap --version
command -v setpriv >/dev/null || { echo "sandbox.sh: setpriv (util-linux) is missing" >&2; exit 1; }
# as an ordinary user (uid 65534 when run as root: root may make one where others may not)
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env)
if "${as_user[@]}" bwrap --unshare-user --disable-userns --ro-bind / / true 2>/dev/null; then
  echo "sandbox.sh: user namespaces work here (the bwrap-userns mode of an ordinary user)"
else
  echo "sandbox.sh: no user namespace could be made here: an ordinary user needs podman," \
    "docker or --allow-unsafe-code (sysctl kernel.unprivileged_userns_clone=1 enables them)" >&2
fi
