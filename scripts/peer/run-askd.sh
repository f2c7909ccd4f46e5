#!/usr/bin/env bash
# Times askd with the stock clients (./stockbench, its own Go module), and
# optionally askd-bench, against one fresh SQLite askd that runs with askd
# serve's default flags (log level info, the access log on); only the
# per-token caps are lifted, through the environment, for the waiters run.
# Usage: [ASKD_BIN=path] [ASKD_FLAGS="--log-level warn"] [LOADS="stock bench"]
#   [ROUNDS=1] [ASKD_BENCH_ARGS="--scenarios latency --latency-n 300"]
#   scripts/peer/run-askd.sh [stockbench flags, e.g. --scenarios latency --n 300]
# LOADS names the load tools run in turn against the same process, ROUNDS
# times over: stock (stockbench) and bench (cmd/askd-bench). The log goes to
# a file, as a service's does. docs/benchmarks.md has the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
(cd "$here/stockbench" && nice go build -p 2 -o "$dir/stockbench" .)
(cd "$root" && nice go build -p 2 -o "$dir/askd-bench" ./cmd/askd-bench)
if [ -n "${ASKD_BIN:-}" ]; then cp "$ASKD_BIN" "$dir/askd"; else (cd "$root" && nice go build -p 2 -o "$dir/askd" ./cmd/askd); fi
db="$dir/askd.db"
"$dir/askd" migrate --db "$db" >/dev/null
at=$("$dir/askd" token create --agent bench-agent --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
ht=$("$dir/askd" token create --human bench-human --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
port=$((20000 + RANDOM % 20000))
# shellcheck disable=SC2086 # ASKD_FLAGS is a list of flags
ASKD_MAX_PENDING_PER_TOKEN=100000 ASKD_MAX_NEW_SESSIONS=100000 "$dir/askd" serve --db "$db" --addr "127.0.0.1:$port" ${ASKD_FLAGS:-} > "$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "run-askd: askd serve did not start:"; cat "$dir/serve.log"; exit 1; }
url="http://127.0.0.1:$port"
server="this tree, commit $(git -C "$root" rev-parse --short HEAD)"
[ -n "${ASKD_BIN:-}" ] && server="$ASKD_BIN"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), server $server, flags: ${ASKD_FLAGS:-default}"
for r in $(seq "${ROUNDS:-1}"); do
	for load in ${LOADS:-stock}; do
		echo "## round $r: $load"
		case $load in
		stock) "$dir/stockbench" --target askd --url "$url" --agent-token "$at" --human-token "$ht" --pid "$pid" "$@" ;;
		# shellcheck disable=SC2086 # a list of flags
		bench) "$dir/askd-bench" --url "$url" --agent-token "$at" --human-token "$ht" ${ASKD_BENCH_ARGS:---scenarios latency --latency-n 300} ;;
		*) echo "run-askd: LOADS: $load is not stock or bench"; exit 2 ;;
		esac
	done
done
