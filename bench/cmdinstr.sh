#!/bin/bash
# cmdinstr.sh: user-space instructions per command of svcdb and redis-server,
# whole server (gnet's read, parse, dispatch, execution, reply, write), under
# the same redis-benchmark stream. Deterministic where CPU time is not: the
# count does not depend on what else runs on the machine.
#
#   bench/cmdinstr.sh [-s svcdb-binary] [-t get,incr,zpopmin,set] [-c 1,50] [-n 50000,250000]
#
# For each server, test and client count it starts the server fresh under
# `valgrind --tool=cachegrind --cache-sim=no`, runs `redis-benchmark -P 16
# -c C -n N -t TEST` once against it, shuts it down and reads valgrind's
# "I refs". Instructions per command = (I(N2) - I(N1)) / (N2 - N1): the
# server's start-up, redis-benchmark's connection set-up and the shutdown
# cancel. What the count leaves out: the kernel's side of every system call
# (read, write, epoll, futex), and the cost of an instruction (a cache miss,
# a locked instruction and a clock read each count as one). Redis' clock
# reads are system calls under valgrind (no vDSO), svcdb's are counted in
# user space, so the count slightly favours Redis.
#
# redis-benchmark's tests without -r: GET and ZPOPMIN on an empty server
# find no key, as svcbench compare's GET and ZPOPMIN rounds do; INCR
# increments one key; SET overwrites one key with a 3-byte value.
# Needs valgrind, redis-server, redis-cli, redis-benchmark.
set -euo pipefail

svcdb=bin/svcdb
tests=get,incr,zpopmin,set
clients=1,50
counts=50000,250000
while getopts "s:t:c:n:" o; do
	case $o in
	s) svcdb=$OPTARG ;;
	t) tests=$OPTARG ;;
	c) clients=$OPTARG ;;
	n) counts=$OPTARG ;;
	*) sed -n '2,10p' "$0"; exit 2 ;;
	esac
done
n1=${counts%,*}
n2=${counts#*,}
for tool in valgrind redis-server redis-cli redis-benchmark; do
	command -v $tool >/dev/null || { echo "cmdinstr: $tool not found" >&2; exit 1; }
done
[ -x "$svcdb" ] || { echo "cmdinstr: $svcdb is not an executable (make build, or -s)" >&2; exit 1; }
svcdb=$(realpath "$svcdb")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# irefs SERVER TEST N C: the server's instructions over one run.
irefs() {
	local srv=$1 test=$2 n=$3 c=$4 port pid log=$work/valgrind.log dir=$work/data
	rm -rf "$dir" && mkdir -p "$dir"
	for _ in 1 2 3 4 5; do # a random port; another one if it is taken
		port=$((20000 + RANDOM % 30000))
		redis-cli -p $port ping >/dev/null 2>&1 || break
	done
	if [ "$srv" = redis ]; then
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$log" 2>&1 &
	else
		(cd "$dir" && exec valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$svcdb" --port $port --http-port 0 --save '' >"$log" 2>&1) &
	fi
	pid=$!
	for _ in $(seq 300); do
		redis-cli -p $port ping >/dev/null 2>&1 && break
		sleep 0.2
	done
	redis-benchmark -p $port -P 16 -c "$c" -n "$n" -t "$test" -q >/dev/null 2>&1
	redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true
	wait $pid || true
	grep 'I *refs' "$log" | sed 's/.*refs: *//; s/,//g'
}

printf '%-8s %3s %10s %10s %6s\n' test c svcdb redis ratio
for c in ${clients//,/ }; do
	for t in ${tests//,/ }; do
		declare -A per=()
		for srv in svcdb redis; do
			a=$(irefs $srv "$t" "$n1" "$c")
			b=$(irefs $srv "$t" "$n2" "$c")
			per[$srv]=$(((b - a) / (n2 - n1)))
		done
		printf '%-8s %3s %10s %10s %6.2f\n' "$t" "$c" "${per[svcdb]}" "${per[redis]}" \
			"$(echo "${per[svcdb]} / ${per[redis]}" | bc -l)"
	done
done
