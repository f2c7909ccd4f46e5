#!/usr/bin/env bash
# test-loaded: `make test` LOAD_RUNS times in a row (default 3) while
# LOAD_WORKERS busy processes (default 4) keep the CPUs busy: stress-ng
# --cpu when it is installed, else `yes > /dev/null` loops. It reports each
# run's result, time and failed tests, and stops the busy work at the end,
# also when interrupted. Exit status: 1 if any run failed.
#
# For developers: a test that waits for an event holds however busy the
# machine is; one that sleeps, or bounds something other than its subject
# by a second or two, fails here. Not part of `make test` or CI (it takes
# 15–30 minutes). See "Tests" in the README.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${LOAD_RUNS:-3}
workers=${LOAD_WORKERS:-4}
make=${MAKE:-make}
logs=$(mktemp -d "${TMPDIR:-/tmp}/askd-test-loaded.XXXXXX")

pids=()
stop_load() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
}
trap stop_load EXIT
trap 'exit 130' INT TERM

if command -v stress-ng >/dev/null 2>&1; then
  stress-ng --cpu "$workers" --quiet &
  pids+=($!)
  echo "test-loaded: load from stress-ng --cpu $workers"
else
  for _ in $(seq "$workers"); do
    yes >/dev/null &
    pids+=($!)
  done
  echo "test-loaded: load from $workers busy loops (yes > /dev/null; stress-ng is used when installed)"
fi

summary=()
failed=0
for i in $(seq "$runs"); do
  echo "== test-loaded: run $i of $runs, $(uptime | sed 's/.*load average/load average/')"
  start=$(date +%s)
  $make test 2>&1 | tee "$logs/run-$i.log"
  rc=${PIPESTATUS[0]}
  took=$(( $(date +%s) - start ))
  result=ok
  if [ "$rc" -ne 0 ]; then result="FAIL (exit $rc)"; failed=1; fi
  summary+=("run $i: $result in $((took / 60))m$((took % 60))s")
  while IFS= read -r line; do summary+=("    $line"); done < <(grep -E '^(--- FAIL|FAIL\s|panic:)' "$logs/run-$i.log")
done
stop_load

echo "== test-loaded: results (logs in $logs)"
printf '%s\n' "${summary[@]}"
exit "$failed"
