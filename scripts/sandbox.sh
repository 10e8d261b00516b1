#!/usr/bin/env bash
# Debian's bubblewrap for the code sandbox (sieval/scoring/sandbox.py) and its tests
# (tests/scoring/test_sandbox.py); setpriv comes with util-linux, which Debian always has.
#
#   scripts/sandbox.sh        install /usr/bin/bwrap when it is missing; print its version
#
# Idempotent: with bwrap present it only prints the version. The package lists are refreshed
# (apt-get update) only when the install fails without them. Needs root, as on CI.
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
