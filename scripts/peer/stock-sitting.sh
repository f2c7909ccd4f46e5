#!/usr/bin/env bash
# One sitting of the stock clients (./stockbench) beside hld: for each round,
# hld (run-hld.sh, HLD_TOOL=stockbench) and then askd (run-askd.sh, askd
# serve's default flags) with each binary named in ASKD_BINS (space-separated;
# empty: this tree's), the same scenario each, alternating, so that the
# shared machine's load falls on every side alike. docs/benchmarks.md has the
# figures.
# Usage: HLD_SRC=dir [ASKD_BINS="a b"] scripts/peer/stock-sitting.sh ROUNDS SCENARIO
#   SCENARIO: latency | throughput | waiters
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:?rounds}
scenario=${2:?scenario: latency, throughput or waiters}
case $scenario in
latency) flags=(--scenarios latency --n 300) ;;
throughput) flags=(--scenarios throughput --agents 1 --duration 5s) ;;
waiters) flags=(--scenarios waiters --waiters 10000) ;;
*) echo "stock-sitting: unknown scenario $scenario"; exit 2 ;;
esac
twice() { "$@" || { echo "## failed; once more"; "$@"; } || echo "## failed again"; }
askd_run() {
	if [ "$1" = this ]; then
		"$here/run-askd.sh" "${flags[@]}"
	else
		ASKD_BIN=$1 "$here/run-askd.sh" "${flags[@]}"
	fi
}
for r in $(seq "$rounds"); do
	echo "## round $r: hld"
	HLD_TOOL=stockbench twice "$here/run-hld.sh" "${flags[@]}"
	for bin in ${ASKD_BINS:-this}; do
		echo "## round $r: askd $bin"
		twice askd_run "$bin"
	done
done
