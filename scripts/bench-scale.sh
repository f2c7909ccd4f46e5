#!/usr/bin/env bash
# Runs askd-bench (cmd/askd-bench) against an askd whose database already holds a team's
# history, seeded by `askd-bench seed`, as docs/benchmarks.md's scale rows describe.
# Usage: STORE=sqlite|postgres SETTLED=N PENDING=N [DATA=dir] [RETAIN=90d] \
#          scripts/bench-scale.sh [askd-bench flags]
# The seeded database is made once and kept in DATA (default: a new temporary
# directory, removed at the end), one per STORE, SETTLED and PENDING; each run
# serves a copy of it, so a purge or the asks a run makes never reach the next.
# SETTLED=0 PENDING=0 is the empty database to compare against. RETAIN serves with
# --retain (the seeded asks were settled 100 to 400 days ago: 90d purges them all).
# VERIFY=1 instead times `askd audit verify` of the copy (and, on SQLite, of its
# export). PostgreSQL (server binaries from pg_config --bindir; as root, run as the
# postgres user) runs one askd process on the database; its cluster stays in DATA
# while DATA is kept, stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${STORE:-sqlite} settled=${SETTLED:-1000000} pending=${PENDING:-0}
keep=${DATA:+1}
data=${DATA:-$(mktemp -d)}
mkdir -p "$data"
work=$(mktemp -d)
pids=()
bin=""
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "$store" = postgres ] && [ -f "$data/pg/data/postmaster.pid" ]; then
		[ -n "${pgdb:-}" ] && "$bin/psql" -h "$data/pg" -p "$pgport" -U postgres -qc "drop database if exists $pgdb" >/dev/null 2>&1 || true
		as_pg "$bin/pg_ctl" -D "$data/pg/data" -m fast stop >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
	[ -n "$keep" ] || rm -rf "$data"
}
trap cleanup EXIT
go build -o "$work/bench" ./cmd/askd-bench
if [ -n "${ASKD_BIN:-}" ]; then cp "$ASKD_BIN" "$work/askd"; else go build -o "$work/askd" ./cmd/askd; fi
seedflags=(--settled "$settled" --pending "$pending" --progress 60s)
name="seed_${settled}_${pending}"
case "$store" in
sqlite)
	if [ ! -f "$data/$name.db" ]; then
		echo "# seeding $settled settled and $pending pending asks (SQLite)"
		"$work/bench" seed --db "$data/$name.db.part" "${seedflags[@]}"
		mv "$data/$name.db.part" "$data/$name.db"
	fi
	cp "$data/$name.db" "$work/askd.db"
	sync "$work/askd.db" # the copy written out before the run, not during it
	db="$work/askd.db"
	;;
postgres)
	bin=$(pg_config --bindir)
	pgport=$((20000 + RANDOM % 20000))
	if [ ! -d "$data/pg/data" ]; then
		mkdir -p "$data/pg"
		[ "$(id -u)" = 0 ] && chown postgres "$data/pg"
		as_pg "$bin/initdb" -D "$data/pg/data" -A trust -U postgres -E UTF8 --no-sync >/dev/null
	fi
	as_pg "$bin/pg_ctl" -D "$data/pg/data" -l "$data/pg/pg.log" -w -o "-p $pgport -k $data/pg -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
	psql=("$bin/psql" -h "$data/pg" -p "$pgport" -U postgres -qAt)
	if [ "$("${psql[@]}" -c "select 1 from pg_database where datname = '$name'")" != 1 ]; then
		echo "# seeding $settled settled and $pending pending asks (PostgreSQL)"
		"${psql[@]}" -c "drop database if exists ${name}_part" -c "create database ${name}_part"
		"$work/bench" seed --db "postgres://postgres@127.0.0.1:$pgport/${name}_part?sslmode=disable" "${seedflags[@]}"
		# As autovacuum leaves a database that has stood a while: the visibility
		# map set, so that counts read an index alone.
		"${psql[@]}" -d "${name}_part" -c "vacuum analyze"
		"${psql[@]}" -c "alter database ${name}_part rename to $name"
	fi
	pgdb="run_$$"
	"${psql[@]}" -c "create database $pgdb template $name"
	db="postgres://postgres@127.0.0.1:$pgport/$pgdb?sslmode=disable"
	;;
*) echo "STORE: sqlite or postgres"; exit 2 ;;
esac
# CPU seconds (user + system) of a set of processes, from /proc.
cpu() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null; done | awk -v hz="$(getconf CLK_TCK)" '{t += $1} END {printf "%.2f", t / hz}'; }
pg() { local pm; pm=$(head -1 "$data/pg/data/postmaster.pid"); echo "$pm $(pgrep -d ' ' -P "$pm" || true)"; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), server ${ASKD_BIN:-this tree at $(git rev-parse --short HEAD)}, $store, $settled settled and $pending pending seeded${RETAIN:+, --retain $RETAIN}"
if [ -n "${VERIFY:-}" ]; then
	TIMEFORMAT='%R s elapsed, %U s user, %S s system'
	time "$work/askd" audit verify --db "$db"
	if [ "$store" = sqlite ]; then
		"$work/askd" audit export --db "$db" --out "$work/audit.jsonl"
		echo "# export: $(du -h "$work/audit.jsonl" | cut -f1)"
		time "$work/askd" audit verify "$work/audit.jsonl"
	fi
	exit 0
fi
at=$("$work/askd" token create --agent bench-agent --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
ht=$("$work/askd" token create --human bench-human --json --db "$db" | sed 's/.*"token":"\([^"]*\)".*/\1/')
port=$((20000 + RANDOM % 20000))
ASKD_MAX_PENDING_PER_TOKEN=100000 ASKD_MAX_NEW_SESSIONS=100000 "$work/askd" serve --db "$db" --addr "127.0.0.1:$port" \
	--log-level warn ${RETAIN:+--retain "$RETAIN"} > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "bench: askd serve did not start:"; cat "$work/serve.log"; exit 1; }
[ "$store" = postgres ] && pg0=$(cpu $(pg))
"$work/bench" --url "http://127.0.0.1:$port" --agent-token "$at" --human-token "$ht" "$@"
[ "$store" = postgres ] && echo "# PostgreSQL CPU during the run: $(echo "$(cpu $(pg)) - $pg0" | bc) s"
grep -i "purge" "$work/serve.log" || true
