#!/usr/bin/env bash
# A real SGLang (0.5.23, Gemma 3 270M, CPU, torch-native attention) for sieval's live tests.
#
#   scripts/live-sglang.sh setup        install SGLang into its own venv (cached, idempotent)
#   scripts/live-sglang.sh venv         the venv only (scripts/test runs it beside vLLM's setup)
#   scripts/live-sglang.sh start        start the server on loopback and wait for /health
#   scripts/live-sglang.sh stop         stop every process of the server started by `start`
#   scripts/live-sglang.sh url          print the base URL of the running server
#   scripts/live-sglang.sh healthy      exit 0 when the server answers /health
#   scripts/live-sglang.sh calls        print how often SGLang called the sgl_kernel stand-in (0 expected)
#
# Everything heavy lives in $SIEVAL_CACHE (default ~/.cache/sieval), outside the checkout, keyed by
# version. The model is the one `scripts/live-vllm.sh setup` prepares. PyPI has no CPU build of
# SGLang's kernel package, so `start` puts an import-only stand-in `sgl_kernel`
# (scripts/sglang_standin/) on PYTHONPATH: every kernel it is asked for logs one line to
# $SIEVAL_SGL_STANDIN_LOG and raises. SIEVAL_SGLANG_PORT picks the port (18331);
# SIEVAL_SGLANG_EXTRA_ARGS adds server flags.
set -euo pipefail

SGLANG_VERSION=0.5.23
CACHE=${SIEVAL_CACHE:-$HOME/.cache/sieval}
VENV=$CACHE/sglang-$SGLANG_VERSION
MODEL_DIR=$CACHE/models/gemma-3-270m-bf16
PORT=${SIEVAL_SGLANG_PORT:-18331}
HOST=127.0.0.1
RUN_DIR=$CACHE/run
PIDFILE=$RUN_DIR/sglang-$PORT.pid
LOG=$RUN_DIR/sglang-$PORT.log
HERE=$(cd "$(dirname "$0")" && pwd)
STANDIN_DIR=$HERE/sglang_standin
export SIEVAL_SGL_STANDIN_LOG=${SIEVAL_SGL_STANDIN_LOG:-$RUN_DIR/sgl-standin-calls.log}
IMPORTS_LOG=$RUN_DIR/sglang-$PORT-standin-imports.log  # symbols SGLang imported (not calls)

log() { printf '[live-sglang] %s\n' "$*" >&2; }

setup_venv() {
  if [ -f "$VENV/.ready" ]; then log "SGLang env cached at $VENV"; return; fi
  log "creating $VENV (sglang==$SGLANG_VERSION: 2.5-11 minutes and about 10 GiB, once)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  # This resolves a CUDA build of torch (and sgl-kernel's CUDA wheel, which cannot load here); both
  # are expected. A CPU-only torch does not work: torchvision from PyPI needs the CUDA torch libraries.
  local t0=$SECONDS
  "$VENV/bin/pip" install -q "sglang==$SGLANG_VERSION"
  log "installed in $((SECONDS - t0)) s; $(du -sh "$VENV" | cut -f1) on disk"
  touch "$VENV/.ready"
}

check_model() {
  if [ -f "$MODEL_DIR/.ready" ]; then log "model cached at $MODEL_DIR"; return; fi
  log "the prepared model $MODEL_DIR is missing; running scripts/live-vllm.sh setup to make it"
  "$HERE/live-vllm.sh" setup
  [ -f "$MODEL_DIR/.ready" ] || { log "still no $MODEL_DIR/.ready; run scripts/live-vllm.sh setup"; exit 1; }
}

url() { echo "http://$HOST:$PORT"; }

# SGLang's /health runs a one-token generation and waits at least 1 s for it, hence the timeout.
healthy() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' \
    "$(url)/health" >/dev/null 2>&1
}

# The server runs in its own session and process group (setsid), whose id is the pid in the
# pidfile, so `stop` can signal the launcher, the scheduler and the detokenizer together.
alive() { [ -f "$PIDFILE" ] && kill -0 -- "-$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  mkdir -p "$RUN_DIR"
  if healthy; then log "already serving at $(url)"; return; fi
  [ -f "$VENV/.ready" ] || { log "no SGLang env at $VENV; run: scripts/live-sglang.sh setup"; exit 1; }
  [ -f "$MODEL_DIR/.ready" ] || { log "no model at $MODEL_DIR; run: scripts/live-sglang.sh setup"; exit 1; }
  if alive; then log "a server from $PIDFILE is running but not healthy; stopping it first"; stop; fi
  : >"$SIEVAL_SGL_STANDIN_LOG"
  : >"$IMPORTS_LOG"
  log "starting SGLang at $(url) (40 s to 3.5 minutes on a CPU; waiting up to 10)"
  local t0=$SECONDS
  SGLANG_USE_CPU_ENGINE=1 PYTHONPATH="$STANDIN_DIR${PYTHONPATH:+:$PYTHONPATH}" \
    SIEVAL_SGL_STANDIN_IMPORTS_LOG="$IMPORTS_LOG" \
    setsid nohup "$VENV/bin/python" -m sglang.launch_server \
    --model-path "$MODEL_DIR" --served-model-name gemma-3-270m \
    --device cpu --attention-backend torch_native --dtype float32 \
    --host "$HOST" --port "$PORT" --context-length 2048 --max-total-tokens 4096 --sleep-on-idle \
    ${SIEVAL_SGLANG_EXTRA_ARGS:-} >"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  while [ $((SECONDS - t0)) -lt 600 ]; do
    if healthy; then log "healthy at $(url) after $((SECONDS - t0)) s"; return; fi
    if ! alive; then
      log "SGLang exited during start-up; last lines of $LOG:"; tail -n 40 "$LOG" >&2
      rm -f "$PIDFILE"; exit 1
    fi
    sleep 1
  done
  log "SGLang did not become healthy in 600 s; last lines of $LOG:"; tail -n 40 "$LOG" >&2
  stop; exit 1
}

stop() {
  [ -f "$PIDFILE" ] || return 0
  pgid=$(cat "$PIDFILE")
  if alive; then
    # The launcher's own SIGTERM handling stops its children; then the group, in case it did not.
    kill -TERM "$pgid" 2>/dev/null || true
    for _ in $(seq 1 20); do alive || break; sleep 1; done
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 1 10); do alive || break; sleep 1; done
    kill -KILL -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 1 10); do alive || break; sleep 1; done
  fi
  rm -f "$PIDFILE"
  log "stopped"
}

calls() {
  if [ -f "$SIEVAL_SGL_STANDIN_LOG" ]; then wc -l <"$SIEVAL_SGL_STANDIN_LOG" | tr -d ' '; else echo 0; fi
}

case "${1:-}" in
  setup) check_model; setup_venv ;;
  venv) setup_venv ;;
  start) start ;;
  stop) stop ;;
  url) url ;;
  healthy) healthy ;;
  calls) calls ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
