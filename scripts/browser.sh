#!/usr/bin/env bash
# Debian's chromium for the HTML report's browser tests (tests/test_html_report.py), the report
# benchmark (bench/html_report.py) and scripts/screenshots.py; playwright drives it (dev extra).
#
#   scripts/browser.sh        install /usr/bin/chromium when it is missing; print its version
#
# Idempotent: with chromium present it only prints the version. The package lists are refreshed
# (apt-get update) only when the install fails without them. Needs root, as on CI.
# Measured on a 2-core machine: a fresh install (19-25 packages, ~105 MB) took 10-15 s; with chromium
# present the script takes well under a second.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ ! -x "$CHROMIUM" ]; then
  export DEBIAN_FRONTEND=noninteractive
  install() { apt-get install -y --no-install-recommends chromium; }
  if ! install; then
    echo "browser.sh: install failed; refreshing the package lists and trying again" >&2
    apt-get update
    install
  fi
fi
"$CHROMIUM" --version
