#!/bin/bash
# Figures for background sessions (issue 28), with the release binary and the mock of
# ../shared/bench: time from `robota --bg` to the first model request,
# RSS of an idle background session (supervisor + session), peak RSS of `robota ps`.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/robota}
MOCK_PY=${MOCK_PY:-$ROOT/../shared/bench/mockllm.py}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd $T && git init -q . 
python3 "$MOCK_PY" --port 0 --script <(echo '[{"text":"hello"},{"text":"again"}]') > $T/mock.log 2>&1 &
MOCK=$!
for i in $(seq 100); do grep -q listening $T/mock.log && break; sleep 0.05; done
PORT=$(grep -o '127.0.0.1:[0-9]*' $T/mock.log | head -1 | cut -d: -f2)
export ROBOTA_HOME=$T/home ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-ant-x
for run in 1 2 3 4 5; do
  curl -s -X POST http://127.0.0.1:$PORT/_mock/reset >/dev/null
  s=$(date +%s%N)
  id=$($BIN --bg "say hello")
  r=$(date +%s%N)
  while ! curl -s http://127.0.0.1:$PORT/_mock/stats | grep -q '"anthropic": *[1-9]'; do :; done
  f=$(date +%s%N)
  while ! $BIN ps --json | grep -q '"idle"'; do sleep 0.05; done
  pid=$($BIN ps --json | python3 -c 'import json,sys; print([s["pid"] for s in json.load(sys.stdin) if s["id"]=="'$id'"][0])')
  rss=$(ps -o rss= -g $pid | awk '{s+=$1} END {print s}')
  sup=$(ps -o rss= -p $pid)
  echo "run $run: --bg returned $(( (r-s)/1000000 )) ms, first request $(( (f-s)/1000000 )) ms, idle RSS $((rss/1024)) MiB (supervisor $((sup/1024)) MiB)"
  $BIN stop $id >/dev/null
done
/usr/bin/time -v $BIN ps 2>&1 >/dev/null | grep "Maximum resident" 
kill $MOCK
