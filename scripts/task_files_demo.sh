#!/usr/bin/env bash
# The private-datasets walk-through of docs/task-files.md, as a transcript: two task files of
# at most 12 lines (examples/private/) beside arc_easy in one run on the embedded reference
# server, interrupted, resumed from another folder, reported, and compared with the same run
# made in one go. Usage: scripts/task_files_demo.sh [OUT_DIR]   (SIEVAL_DATA_DIR must be set)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIEVAL=${SIEVAL:-$ROOT/.venv/bin/sieval}
OUT=${1:-$(mktemp -d)}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 COLUMNS=100
show() { echo "\$ $*"; "$@" 2>&1; echo "[exit $?]"; echo; }
cd "$ROOT"
show wc -l examples/private/quiz_mc.yaml examples/private/quiz_qa.yaml
show cat examples/private/quiz_mc.yaml
show cat examples/private/quiz_qa.yaml
show head -n 2 examples/private/quiz_mc.jsonl
show "$SIEVAL" tasks --include-path examples/private quiz_mc
echo "\$ sieval eval examples/private/eval.yaml --out $OUT --concurrency 1   # Ctrl-C once 20 samples are recorded"
set -m  # job control: a background job keeps SIGINT (Ctrl-C), as in a terminal
"$SIEVAL" eval examples/private/eval.yaml --out "$OUT" --concurrency 1 > "$OUT.log" 2>&1 &
PID=$!
while kill -0 "$PID" 2>/dev/null; do
  DONE=$(cat "$OUT"/*/ref/*/records.jsonl 2>/dev/null | wc -l)
  [ "$DONE" -ge 20 ] && break
  sleep 0.2
done
kill -INT "$PID"; wait "$PID"; CODE=$?
grep -v '^\s*$' "$OUT.log"; echo "[exit $CODE]"; echo
RUN=$(ls -d "$OUT"/*/ | head -n 1); RUN=${RUN%/}
cd /
show "$SIEVAL" eval --resume "$RUN"
show "$SIEVAL" report "$RUN"
cd "$ROOT"
show "$SIEVAL" eval examples/private/eval.yaml --out "$OUT/again"
AGAIN=$(ls -d "$OUT"/again/*/ | head -n 1); AGAIN=${AGAIN%/}
show "$SIEVAL" compare "$RUN" "$AGAIN" --labels resumed,in-one-go
show "$SIEVAL" samples "$RUN" --task quiz_qa --limit 3
