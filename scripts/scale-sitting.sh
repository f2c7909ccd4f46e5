#!/usr/bin/env bash
# One sitting of the scale figures of docs/benchmarks.md (SPEC §8's rows measured on a
# team's history), on SQLite and on PostgreSQL, each through scripts/bench-scale.sh:
#   1. answer latency and CPU per create + answer cycle, an empty database against one
#      with SETTLED settled asks, alternating, ROUNDS rounds;
#   2. history searches with SETTLED settled asks;
#   3. the inbox's first load with PENDING pending asks (the API's share on both stores;
#      the browser's on SQLite, with INBOX_BROWSER=1: internal/web's
#      TestTenThousandPendingAsks at PENDING);
#   4. answers while --retain 90d purges the SETTLED asks, and after;
#   5. askd audit verify of the seeded chain (2 rows a settled ask), of VERIFY_AT each;
#   6. SSE fan-out to 1,000 streams while 64 agents cycle.
# Usage: [STORES="sqlite postgres"] [SETTLED=1000000] [PENDING=100000] [ROUNDS=3]
#        [DATA=dir] [STEPS="1 2 3 4 5 6"] scripts/scale-sitting.sh
# SETTLED is at least 100,020 (the history step searches asks' numbers from 100,000).
# The seeded databases are kept in DATA (default bin/scale) between sittings: seeding
# 1,000,000 settled asks takes about 2 minutes on SQLite, 12 on PostgreSQL, on this
# project's 2-core machine. Hours in all: make bench-scale, never make test.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA=${DATA:-bin/scale}
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
settled=${SETTLED:-1000000} pending=${PENDING:-100000} rounds=${ROUNDS:-3}
steps=" ${STEPS:-1 2 3 4 5 6} "
run() { local store=$1 s=$2 p=$3; shift 3; STORE=$store SETTLED=$s PENDING=$p scripts/bench-scale.sh "$@" 2>&1 | grep -v '^FIGURE'; }
for store in ${STORES:-sqlite postgres}; do
	echo "=== $store"
	if [[ $steps == *" 1 "* ]]; then
		for r in $(seq "$rounds"); do
			for s in 0 "$settled"; do
				echo "--- latency and CPU, round $r, $s settled"
				run "$store" "$s" 0 --scenarios latency,throughput --agents 1 --duration 10s --latency-n 300
			done
		done
	fi
	if [[ $steps == *" 2 "* ]]; then
		echo "--- history search, $settled settled"
		run "$store" "$settled" 0 --scenarios history --history-n 30 --seed-sessions $((settled / 20))
	fi
	if [[ $steps == *" 3 "* ]]; then
		echo "--- inbox first load, $pending pending"
		run "$store" 0 "$pending" --scenarios inbox --inbox-n 20
		if [ "$store" = sqlite ] && [ -n "${INBOX_BROWSER:-}" ]; then
			ASKD_INBOX_PENDING=$pending go test -count=1 -timeout 30m -run 'TestTenThousandPendingAsks' -v ./internal/web | grep -E 'perf_test|^(ok|FAIL|---)'
		fi
	fi
	if [[ $steps == *" 4 "* ]]; then
		echo "--- answers while --retain 90d purges $settled settled asks"
		RETAIN=90d run "$store" "$settled" 0 --scenarios purge --latency-n 300 --purge-max 2h
	fi
	if [[ $steps == *" 5 "* ]]; then
		for s in ${VERIFY_AT:-$((settled / 8)) $((settled / 4)) $((settled / 2))}; do
			echo "--- askd audit verify, $s settled ($((2 * s)) rows)"
			VERIFY=1 run "$store" "$s" 0
		done
	fi
	if [[ $steps == *" 6 "* ]]; then
		echo "--- SSE fan-out to 1,000 streams, 64 agents cycling"
		run "$store" 0 0 --scenarios sse --sse-streams 1000 --sse-rounds 20 --sse-cycling 64
	fi
done
