#!/bin/bash
# pgo-profile.sh: writes cmd/svcdb/default.pgo, the CPU profile `go build`
# uses for profile-guided optimization of the svcdb binary (-pgo=auto: a
# default.pgo in the main package's directory is used by go build and go
# install; go test does not use it).
#
#   bench/pgo-profile.sh [-s svcdb-binary] [-o cmd/svcdb/default.pgo]
#
# The load is what the server is measured with (svcbench compare, the
# README's tour): redis-benchmark's default suite at -P 16 and -P 1, on one
# key and on -r 100000, 50 clients, each run against a fresh svcdb with its
# default configuration and --cpuprofile; the profiles are merged into one.
# Regenerate it when the hot path changes shape (a renamed or split hot
# function loses its part of the optimization until then; a stale profile
# never changes behaviour, only what is inlined and how code is laid out).
# docs/performance.md, "Instructions per command against Redis".
set -euo pipefail

svcdb=bin/svcdb
out=cmd/svcdb/default.pgo
while getopts "s:o:" o; do
	case $o in
	s) svcdb=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,9p' "$0"; exit 2 ;;
	esac
done
[ -x "$svcdb" ] || { echo "pgo-profile: $svcdb is not an executable (make build, or -s)" >&2; exit 1; }
svcdb=$(realpath "$svcdb")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run=0
for pipeline in 16 1; do
	for keys in 0 100000; do
		n=$((pipeline == 16 ? 400000 : 50000))
		r=()
		[ "$keys" -gt 0 ] && r=(-r "$keys")
		run=$((run + 1))
		port=$((20000 + RANDOM % 30000))
		mkdir -p "$work/$run"
		(cd "$work/$run" && exec "$svcdb" --port $port --http-port 0 --save '' --cpuprofile "$work/$run.pprof" >/dev/null 2>&1) &
		pid=$!
		for _ in $(seq 100); do
			redis-cli -p $port ping >/dev/null 2>&1 && break
			sleep 0.1
		done
		redis-benchmark -p $port -c 50 -P $pipeline -n $n "${r[@]}" -q >/dev/null
		redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true
		wait $pid || true
	done
done
go tool pprof -proto "$work"/*.pprof >"$out"
echo "pgo-profile: wrote $out from $run runs"
