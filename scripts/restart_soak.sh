#!/usr/bin/env bash
# A real vLLM restart mid-run (docs/reliability.md): a run against a vLLM of its own on
# SIEVAL_VLLM_PORT (default 18325, started first with scripts/live-vllm.sh start), that vLLM
# stopped 25 s in and started again at once; then the same run straight, for comparison.
#   scripts/restart_soak.sh [OUT]   (then: python scripts/restart_figures.py OUT)
set -u
cd "$(dirname "$0")/.."
export SIEVAL_VLLM_PORT=${SIEVAL_VLLM_PORT:-18325}
OUT=${1:-/tmp/restart}
S="${PYTHON:-.venv/bin/python} -m sieval"
rm -rf "$OUT"; mkdir -p "$OUT"
ARGS="--endpoint http://127.0.0.1:$SIEVAL_VLLM_PORT --model gemma-3-270m --task arc_easy_kshot_ppl --num-fewshot 0 --limit 60 --concurrency 4"
t0=$SECONDS
$S eval $ARGS --out $OUT/run > $OUT/eval.log 2>&1 &
EVAL=$!
sleep 25
echo "[$((SECONDS-t0)) s] stopping vLLM" 
scripts/live-vllm.sh stop
echo "[$((SECONDS-t0)) s] stopped; starting again"
scripts/live-vllm.sh start
echo "[$((SECONDS-t0)) s] vLLM healthy again"
wait $EVAL; echo "[$((SECONDS-t0)) s] eval exit $?"
$S eval $ARGS --out $OUT/clean > $OUT/clean.log 2>&1; echo "[$((SECONDS-t0)) s] clean exit $?"
