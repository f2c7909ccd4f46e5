#!/usr/bin/env bash
# One sitting beside hld: for each round, hld (scripts/peer/run-hld.sh, gzip
# off: its fastest configuration) and then askd (scripts/bench-sqlite.sh)
# with each binary named in ASKD_BINS (space-separated; empty: this tree's),
# the same scenario each, alternating, so that the shared machine's load
# falls on every side alike. docs/benchmarks.md has the figures and how to
# read them.
# Usage: HLD_SRC=dir [ASKD_BINS="a b"] scripts/peer/sitting.sh ROUNDS SCENARIO
#   SCENARIO: latency | throughput | waiters
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:?rounds}
scenario=${2:?scenario: latency, throughput or waiters}
case $scenario in
latency) hld=(--scenarios latency --n 300); askd=(--scenarios latency --latency-n 300) ;;
throughput) hld=(--scenarios throughput --agents 1,8,64 --duration 5s); askd=(--scenarios throughput --agents 1,8,64 --duration 5s) ;;
waiters) hld=(--scenarios waiters --waiters 10000); askd=(--scenarios waiters --waiters 10000) ;;
*) echo "sitting: unknown scenario $scenario"; exit 2 ;;
esac
# A run that fails (a port taken by another process on a shared machine, say)
# is tried once more, and the sitting goes on either way.
twice() { "$@" || { echo "## failed; once more"; "$@"; } || echo "## failed again"; }
askd_run() {
	if [ "$1" = this ]; then
		"$here/../bench-sqlite.sh" "${askd[@]}"
	else
		ASKD_BIN=$1 "$here/../bench-sqlite.sh" "${askd[@]}"
	fi
}
for r in $(seq "$rounds"); do
	echo "## round $r: hld"
	twice "$here/run-hld.sh" --no-gzip "${hld[@]}"
	for bin in ${ASKD_BINS:-this}; do
		echo "## round $r: askd $bin"
		twice askd_run "$bin"
	done
done
