#!/usr/bin/env bash
# A real vLLM restart mid-run (docs/reliability.md): a run against a vLLM of its own on
# SIEVAL_VLLM_PORT (default 18325, started first with scripts/live-vllm.sh start), that vLLM
# stopped 25 s in and started again at once; then the same run straight, for comparison.
#   scripts/restart_soak.sh [OUT]   (then: python scripts/restart_figures.py OUT)
# SIEVAL_SOAK_FAULTS=0.2 puts scripts/fault_proxy.py (that share of requests faulted, port 18397)
# between the run and the vLLM, so the restart comes on top of transient faults; the straight run
# goes to the vLLM itself. SIEVAL_SOAK_LIMIT sets the samples (60).
set -u
cd "$(dirname "$0")/.."
export SIEVAL_VLLM_PORT=${SIEVAL_VLLM_PORT:-18325}
OUT=${1:-/tmp/restart}
S="${PYTHON:-.venv/bin/python} -m sieval"
rm -rf "$OUT"; mkdir -p "$OUT"
ARGS="--model gemma-3-270m --task arc_easy_kshot_ppl --num-fewshot 0 --limit ${SIEVAL_SOAK_LIMIT:-60} --concurrency 4"
STRAIGHT=http://127.0.0.1:$SIEVAL_VLLM_PORT
RUN=$STRAIGHT
PROXY=
if [ -n "${SIEVAL_SOAK_FAULTS:-}" ]; then
  ${PYTHON:-.venv/bin/python} scripts/fault_proxy.py "$STRAIGHT" --port 18397 --rate "$SIEVAL_SOAK_FAULTS" \
    --seed 29 --retry-after 1 --stall 35 --log "$OUT/proxy.jsonl" > "$OUT/proxy.log" 2>&1 &
  PROXY=$!
  RUN=http://127.0.0.1:18397
  ARGS="$ARGS --retries 6 --timeout 30"
  sleep 2
fi
t0=$SECONDS
$S eval --endpoint $RUN $ARGS --out $OUT/run > $OUT/eval.log 2>&1 &
EVAL=$!
sleep 25
echo "[$((SECONDS-t0)) s] stopping vLLM" 
scripts/live-vllm.sh stop
echo "[$((SECONDS-t0)) s] stopped; starting again"
scripts/live-vllm.sh start
echo "[$((SECONDS-t0)) s] vLLM healthy again"
wait $EVAL; echo "[$((SECONDS-t0)) s] eval exit $?"
[ -n "$PROXY" ] && kill "$PROXY"
$S eval --endpoint $STRAIGHT $ARGS --out $OUT/clean > $OUT/clean.log 2>&1; echo "[$((SECONDS-t0)) s] clean exit $?"
