#!/usr/bin/env bash
# Runs askd-bench (cmd/askd-bench) against the split topology on a throwaway PostgreSQL: one
# `--role agent` and one `--role inbox` process sharing only the database, as
# docs/benchmarks.md describes. Needs PostgreSQL's server binaries (pg_config
# --bindir names them); as root, the cluster runs as the postgres user.
# Usage: scripts/bench-postgres.sh [extra askd-bench flags]
# SYNC=off runs the cluster with synchronous_commit = off; ASKD_BIN=path serves
# with that binary instead of this tree's (to compare two builds; the load tool
# is this tree's either way); DEBUG=1
# serves pprof on 127.0.0.1:6061 (agent) and 127.0.0.1:6062 (inbox).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(pg_config --bindir)
dir=$(mktemp -d)
pids=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && chown postgres "$dir"
go build -o "$dir/bench" ./cmd/askd-bench   # the load tool is always this tree's, so two servers meet the same one
if [ -n "${ASKD_BIN:-}" ]; then cp "$ASKD_BIN" "$dir/askd"; else go build -o "$dir/askd" ./cmd/askd; fi
as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync >/dev/null
port=$((20000 + RANDOM % 20000))
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c synchronous_commit=${SYNC:-on} ${PGOPTS:-}" start >/dev/null
"$bin/psql" -h "$dir" -p "$port" -U postgres -qc 'create database askd'
[ -n "${STATEMENTS:-}" ] && "$bin/psql" -h "$dir" -p "$port" -U postgres -d askd -qc 'create extension pg_stat_statements'
db="postgres://postgres@127.0.0.1:$port/askd?sslmode=disable"
at=$("$dir/askd" token create --agent bench-agent --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
ht=$("$dir/askd" token create --human bench-human --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
ap=$((port + 1)); ip=$((port + 2))
dbg_a=() dbg_i=()
if [ -n "${DEBUG:-}" ]; then # pprof on 127.0.0.1:6061 (agent) and :6062 (inbox)
	dbg_a=(--debug-addr 127.0.0.1:6061) dbg_i=(--debug-addr 127.0.0.1:6062)
fi
ASKD_MAX_PENDING_PER_TOKEN=100000 ASKD_MAX_NEW_SESSIONS=100000 "$dir/askd" serve --role agent --db "$db" --addr "127.0.0.1:$ap" --log-level warn "${dbg_a[@]}" > "$dir/agent.log" 2>&1 & pids+=($!)
ASKD_MAX_PENDING_PER_TOKEN=100000 ASKD_MAX_NEW_SESSIONS=100000 "$dir/askd" serve --role inbox --db "$db" --addr "127.0.0.1:$ip" --log-level warn "${dbg_i[@]}" > "$dir/inbox.log" 2>&1 & pids+=($!)
for u in "$ap" "$ip"; do
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$u/healthz" >/dev/null && break; sleep 0.1; done
	curl -sf "http://127.0.0.1:$u/healthz" >/dev/null || { echo "bench: askd serve on port $u did not start:"; cat "$dir"/*.log; exit 1; }
done
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD), PostgreSQL $("$bin/postgres" --version | awk '{print $3}'), synchronous_commit=${SYNC:-on}"
# CPU seconds (user + system) of a set of processes, from /proc.
cpu() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null; done | awk -v hz="$(getconf CLK_TCK)" '{t += $1} END {printf "%.2f", t / hz}'; }
# This cluster's processes only (the postmaster and its children): another
# cluster running beside it on the machine is not counted.
pg() { local pm; pm=$(head -1 "$dir/data/postmaster.pid"); echo "$pm $(pgrep -d ' ' -P "$pm" || true)"; }
pg0=$(cpu $(pg)); a0=$(cpu "${pids[0]}"); i0=$(cpu "${pids[1]}")
TIMEFORMAT='%U %S'
{ time "$dir/bench" --url "http://127.0.0.1:$ap" --inbox-url "http://127.0.0.1:$ip" --agent-token "$at" --human-token "$ht" "$@" 2>&3 ; } 3>&2 2> "$dir/time"
if [ -n "${STATEMENTS:-}" ]; then
	"$bin/psql" -h "$dir" -p "$port" -U postgres -d askd -qAt -F ' | ' -c "select calls, round(total_exec_time::numeric, 1) as ms, regexp_replace(left(query, 90), '\s+', ' ', 'g') from pg_stat_statements order by calls desc limit 40"
	"$bin/psql" -h "$dir" -p "$port" -U postgres -d askd -qAt -c "select 'transactions: ' || xact_commit || ' committed, ' || xact_rollback || ' rolled back' from pg_stat_database where datname = 'askd'"
fi
echo "# CPU seconds during the run: PostgreSQL $(echo "$(cpu $(pg)) - $pg0" | bc), agent $(echo "$(cpu "${pids[0]}") - $a0" | bc), inbox $(echo "$(cpu "${pids[1]}") - $i0" | bc), bench $(awk '{print $1 + $2}' "$dir/time")"
