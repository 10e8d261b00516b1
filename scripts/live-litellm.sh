#!/usr/bin/env bash
# LiteLLM's proxy (1.108.7) as a real Gemini-wire server (`generateContent`) in front of the live vLLM.
#
#   scripts/live-litellm.sh setup       install litellm[proxy] into its own venv (cached, idempotent)
#   scripts/live-litellm.sh start       write the config, start the proxy on loopback, wait for health
#   scripts/live-litellm.sh stop        stop the proxy started by `start` (its whole process group)
#   scripts/live-litellm.sh url         print the base URL of the proxy
#   scripts/live-litellm.sh healthy     exit 0 when the proxy answers /health/liveliness
#
# The proxy translates Gemini requests to OpenAI chat requests for `hosted_vllm/gemma-3-270m` at
# ${SIEVAL_VLLM_URL:-http://127.0.0.1:18321}/v1 (start vLLM first: scripts/live-vllm.sh start).
# SIEVAL_LITELLM_PORT picks the port (18341); SIEVAL_LITELLM_KEY the master key the client sends as
# x-goog-api-key (default sk-sieval-local-test, a fake local key); SIEVAL_LITELLM_EXTRA_ARGS adds
# proxy flags. Heavy files live in $SIEVAL_CACHE; config, pidfile and log in $SIEVAL_CACHE/run.
set -euo pipefail

LITELLM_VERSION=1.108.7
CACHE=${SIEVAL_CACHE:-$HOME/.cache/sieval}
VENV=$CACHE/litellm-$LITELLM_VERSION
PORT=${SIEVAL_LITELLM_PORT:-18341}
HOST=127.0.0.1
VLLM_URL=${SIEVAL_VLLM_URL:-http://127.0.0.1:18321}
KEY=${SIEVAL_LITELLM_KEY:-sk-sieval-local-test}
RUN_DIR=$CACHE/run
CONFIG=$RUN_DIR/litellm-$PORT.yaml
PIDFILE=$RUN_DIR/litellm-$PORT.pid
LOG=$RUN_DIR/litellm-$PORT.log

log() { printf '[live-litellm] %s\n' "$*" >&2; }

setup() {
  if [ -f "$VENV/.ready" ]; then log "LiteLLM env cached at $VENV"; return; fi
  log "creating $VENV (litellm[proxy]==$LITELLM_VERSION, several minutes and about 750 MB)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q "litellm[proxy]==$LITELLM_VERSION"
  touch "$VENV/.ready"
}

url() { echo "http://$HOST:$PORT"; }

healthy() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
    "$(url)/health/liveliness" >/dev/null 2>&1
}

write_config() {
  mkdir -p "$RUN_DIR"
  # The master key is read from the environment at start, so it is never written to the config file.
  cat >"$CONFIG" <<EOF
model_list:
  - model_name: gemma-3-270m
    litellm_params:
      model: hosted_vllm/gemma-3-270m
      api_base: $VLLM_URL/v1
      api_key: "none"
general_settings:
  master_key: os.environ/SIEVAL_LITELLM_KEY
EOF
}

start() {
  if healthy; then log "already serving at $(url)"; return; fi
  if [ ! -f "$VENV/.ready" ]; then log "no LiteLLM env at $VENV: run '$0 setup' first"; exit 1; fi
  write_config
  log "starting LiteLLM proxy at $(url) -> $VLLM_URL/v1 (about 6 s)"
  # setsid: the proxy leads its own process group, so `stop` can end it and all its children by pid.
  SIEVAL_LITELLM_KEY=$KEY LITELLM_LOCAL_MODEL_COST_MAP=True NO_DOCS=True \
    setsid nohup "$VENV/bin/litellm" --config "$CONFIG" --host "$HOST" --port "$PORT" \
    ${SIEVAL_LITELLM_EXTRA_ARGS:-} >"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 300); do
    if healthy; then log "healthy at $(url)"; return; fi
    if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
      rm -f "$PIDFILE"
      log "LiteLLM exited during start-up; its ERROR lines, then the last lines of $LOG:"
      grep -m 10 'ERROR' "$LOG" >&2 || true
      tail -n 40 "$LOG" >&2; exit 1
    fi
    sleep 1
  done
  log "LiteLLM did not become healthy in 300 s; last lines of $LOG:"; tail -n 40 "$LOG" >&2
  stop; exit 1
}

stop() {
  [ -f "$PIDFILE" ] || return 0
  pid=$(cat "$PIDFILE")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  log "stopped"
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  stop) stop ;;
  url) url ;;
  healthy) healthy ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
