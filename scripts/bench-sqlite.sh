#!/usr/bin/env bash
# Runs askd-bench (cmd/askd-bench) against a fresh SQLite askd on loopback, as docs/benchmarks.md
# describes. Usage: scripts/bench-sqlite.sh [extra askd-bench flags]
# ASKD_BIN=path serves with that binary instead of this tree's (to compare two
# builds; the load tool is this tree's either way). The per-token
# caps are lifted through the environment (a build without them ignores it):
# the benchmark is one token driving hundreds of sessions.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/bench" ./cmd/askd-bench   # the load tool is always this tree's, so two servers meet the same one
if [ -n "${ASKD_BIN:-}" ]; then cp "$ASKD_BIN" "$dir/askd"; else go build -o "$dir/askd" ./cmd/askd; fi
db="$dir/askd.db"
"$dir/askd" migrate --db "$db" >/dev/null   # token create never makes a database
at=$("$dir/askd" token create --agent bench-agent --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
ht=$("$dir/askd" token create --human bench-human --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
port=$((20000 + RANDOM % 20000))
ASKD_MAX_PENDING_PER_TOKEN=100000 ASKD_MAX_NEW_SESSIONS=100000 "$dir/askd" serve --db "$db" --addr "127.0.0.1:$port" --log-level warn > "$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "bench: askd serve did not start:"; cat "$dir/serve.log"; exit 1; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), server ${ASKD_BIN:-this tree at $(git rev-parse --short HEAD)}"
"$dir/bench" --url "http://127.0.0.1:$port" --agent-token "$at" --human-token "$ht" "$@"
