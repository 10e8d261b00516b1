#!/usr/bin/env bash
# RULER's own generator and evaluator as an oracle (tests/tasks/test_ruler_parity.py): a venv with
# what the scripts in shared/data/ruler/reference/ import, cached outside the checkout and keyed
# by this list of versions, plus NLTK's English Punkt model (scripts/ifeval-oracle.sh's copy).
#
#   scripts/ruler-oracle.sh          install it when missing; print the venv's python
#   scripts/ruler-oracle.sh --where  print the venv's python if installed (exit 1 if not)
#
# wonderwords is pinned to the version sieval's `ruler` extra reads its word lists from;
# transformers to the vLLM venv's (scripts/live-vllm.sh), so both read the model directory's
# tokenizer the same way. No torch: the reference only tokenizes. Idempotent; ~150 MB once.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(wonderwords==3.0.1 nltk==3.9.2 numpy==2.3.5 scipy==1.16.3 tqdm tenacity pyyaml
  pandas==2.3.3 transformers==5.19.0)
KEY=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-12)
ROOT=${SIEVAL_CACHE:-$HOME/.cache/sieval}/ruler-oracle-$KEY
PY=${PYTHON:-python3}

if [ "${1:-}" = "--where" ]; then
  [ -f "$ROOT/.complete" ] || exit 1
  echo "$ROOT/bin/python"
  exit 0
fi
if [ ! -x "$ROOT/bin/python" ] || [ ! -f "$ROOT/.complete" ]; then
  rm -rf "$ROOT"
  "$PY" -m venv "$ROOT"
  "$ROOT/bin/python" -m pip install -q --disable-pip-version-check "${PACKAGES[@]}" \
    2> >(grep -v "^WARNING: Location" >&2)
  touch "$ROOT/.complete"
fi
PYTHON="$PY" scripts/ifeval-oracle.sh >/dev/null  # the Punkt model RULER's sent_tokenize loads
echo "$ROOT/bin/python"
