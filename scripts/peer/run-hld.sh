#!/usr/bin/env bash
# Times HumanLayer's hld daemon the way askd-bench times askd (latency,
# throughput, waiters): starts a fresh hld (its own state directory, database,
# socket and HTTP port), runs hldbench against it, prints the figures, stops it.
# Usage: HLD_SRC=dir scripts/peer/run-hld.sh [--scenarios latency,throughput,waiters]
#   [--n 300] [--pause 20ms] [--agents 1,8,64] [--duration 5s] [--waiters 10000]
#   [--no-gzip] [--timeout 10m]
# HLD_SRC: a work tree of github.com/humanlayer/humanlayer to build hld from
# (needs a C compiler: hld uses cgo SQLite). The load tool is ./hldbench
# beside this script, its own Go module; HLD_TOOL=stockbench runs the stock
# clients (./stockbench) instead. docs/benchmarks.md has the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${HLD_SRC:?set HLD_SRC to a humanlayer work tree}
[ -d "$src/hld" ] || { echo "run-hld: no hld source at $src/hld"; exit 1; }
state=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$state"
}
trap cleanup EXIT
mkdir -p "$state/out"

# Go's build cache makes the builds quick after the first (hld's cgo SQLite
# takes a couple of minutes the first time). -p 2: a small shared machine.
(cd "$src/hld" && CGO_ENABLED=1 nice go build -p 2 -o "$state/out/hld" ./cmd/hld)
tool=${HLD_TOOL:-hldbench}
case $tool in
hldbench) target=() ;;
stockbench) target=(--target hld) ;;
*) echo "run-hld: HLD_TOOL is hldbench or stockbench"; exit 2 ;;
esac
(cd "$here/$tool" && nice go build -p 2 -o "$state/out/bench" .)


# hld's state, all inside $state: HOME (its ~/.humanlayer defaults), an empty
# config file where viper looks (XDG config dir and the working directory),
# the database, the socket; HTTP on loopback, port 0 (hld prints the port).
mkdir -p "$state/home" "$state/config/humanlayer" "$state/bin" "$state/work"
echo '{}' > "$state/config/humanlayer/humanlayer.json"
echo '{}' > "$state/work/humanlayer.json"
# hld refuses to create any session, even a draft that never launches Claude
# Code, unless a claude binary exists; this stub stands in (and answers the
# `claude --version` that GET /api/v1/health runs). It is never launched as an
# agent: the bench's session is a draft.
cat > "$state/bin/claude" <<'EOF'
#!/bin/sh
[ "$1" = "--version" ] && { echo "0.0.0 (stub for hld bench)"; exit 0; }
echo "stub claude: not a real agent" >&2; exit 1
EOF
chmod +x "$state/bin/claude"

cd "$state/work"
env -u HUMANLAYER_API_KEY -u HUMANLAYER_DEBUG \
	HOME="$state/home" XDG_CONFIG_HOME="$state/config" \
	HUMANLAYER_DAEMON_SOCKET="$state/daemon.sock" \
	HUMANLAYER_DATABASE_PATH="$state/daemon.db" \
	HUMANLAYER_DAEMON_HTTP_HOST=127.0.0.1 \
	HUMANLAYER_DAEMON_HTTP_PORT=0 \
	HUMANLAYER_CLAUDE_PATH="$state/bin/claude" \
	"$state/out/hld" > "$state/hld.out" 2> "$state/hld.log" &
pid=$!

port=
for _ in $(seq 100); do
	port=$(sed -n 's/^HTTP_PORT=\([0-9][0-9]*\)$/\1/p' "$state/hld.out" | head -1)
	[ -n "$port" ] && curl -sf "http://127.0.0.1:$port/api/v1/config/status" >/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ] || ! curl -sf "http://127.0.0.1:$port/api/v1/config/status" >/dev/null; then
	echo "run-hld: hld did not start:"; cat "$state/hld.log"; exit 1
fi

commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
version=$(curl -sf "http://127.0.0.1:$port/api/v1/health" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p' | head -1)
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), hld commit $commit (version ${version:-?}), $(go version | cut -d' ' -f3)"
rc=0
"$state/out/bench" "${target[@]}" --url "http://127.0.0.1:$port" --pid "$pid" "$@" || rc=$?

# Stop hld as its own signal handling expects (SIGTERM: graceful shutdown).
kill -TERM "$pid"
t=0
while kill -0 "$pid" 2>/dev/null && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
if kill -0 "$pid" 2>/dev/null; then
	echo "run-hld: hld did not stop within 10 s; killing it"; kill -KILL "$pid"; rc=1
fi
wait "$pid" 2>/dev/null || { s=$?; [ $s -eq 0 ] || echo "run-hld: hld exited with status $s"; }
pid=
if [ $rc -ne 0 ]; then
	echo "run-hld: hld's log tail:"; tail -20 "$state/hld.log"
fi
exit $rc
