#!/usr/bin/env bash
# bfcl-eval 2026.3.23 (the Berkeley Function Calling Leaderboard's data and checker) in its own
# venv, for the BFCL task's data and for tests/scoring/test_bfcl_parity.py, which runs its AST
# checker and its Prompt decoder on the same outputs as sieval's (an oracle, never imported by
# sieval itself).
#
#   scripts/bfcl-oracle.sh        install it when missing; print the venv's python
#
# Its declared dependencies are very heavy (sentence-transformers, faiss, six vendor SDKs), so
# the package is installed with --no-deps, plus the few its checker and decoders import:
# filelock and tenacity (bfcl_eval.utils, model_handler.utils) and tree_sitter with its Java and
# JavaScript grammars (the decoders' parsers), and mpmath (the multi-turn MathAPI environment,
# which the bfcl_multi_turn tasks import through sieval/scoring/bfcl_env_driver.py, run with
# this venv's python), and overrides, rank_bm25 and numpy (the memory backends MemoryAPI_kv and
# MemoryAPI_rec_sum, which the bfcl_memory tasks import so). Its model registry (constants/model_config.py) imports every vendor SDK: the parity driver puts a stand-in for that one module in its place.
# The data is then bfcl_eval/data under the venv (tasks/_bfcl.py finds it). ~125 MB, cached.
set -euo pipefail

VERSION=2026.3.23
ROOT=${SIEVAL_CACHE:-$HOME/.cache/sieval}/bfcl-oracle-$VERSION
PY=${PYTHON:-python3}

if ! "$ROOT/bin/python" -c "import bfcl_eval, tree_sitter, filelock, tenacity, mpmath, overrides, rank_bm25, numpy" 2>/dev/null; then
  "$PY" -m venv "$ROOT"
  "$ROOT/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    "bfcl-eval==$VERSION" 'filelock==3.20.0' 'tenacity==9.2.1' 'tree_sitter==0.21.3' \
    'tree-sitter-java==0.21.0' 'tree-sitter-javascript==0.21.4' 'mpmath==1.3.0' \
    'overrides==7.7.0' 'rank-bm25==0.2.2' 'numpy==2.3.4' \
    2> >(grep -v "^WARNING: Location" >&2)
fi
echo "$ROOT/bin/python"
