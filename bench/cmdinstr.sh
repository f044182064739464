#!/bin/bash
# cmdinstr.sh: user-space instructions per command of svcdb and redis-server,
# whole server (gnet's read, parse, dispatch, execution, reply, write), under
# the same redis-benchmark stream. Deterministic where CPU time is not: the
# count does not depend on what else runs on the machine.
#
#   bench/cmdinstr.sh [-s svcdb-binary] [-t get,incr,zpopmin,set] [-c 1,50] [-n 50000,250000]
#                     [-P 16] [-i] [-o dir] [-r redis|none]
#
# -i adds cachegrind's cache model (I1 32 KiB 8-way, D1 32 KiB 8-way, LL 1 MiB
# 16-way, 64-byte lines: this machine's L1 and L2) and reports level-1
# instruction-cache misses per command (I1mr) beside the instructions; -o
# keeps each run's cachegrind.out files and their N2-N1 difference (cg_diff)
# in dir, for `cg_annotate dir/svcdb-get-c1.diff` per function. -P sets the
# pipeline depth; -r none measures svcdb alone.
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
pipeline=16
cachesim=no
keep=
servers="svcdb redis"
while getopts "s:t:c:n:P:io:r:" o; do
	case $o in
	s) svcdb=$OPTARG ;;
	t) tests=$OPTARG ;;
	c) clients=$OPTARG ;;
	n) counts=$OPTARG ;;
	P) pipeline=$OPTARG ;;
	i) cachesim=yes ;;
	o) keep=$(realpath -m "$OPTARG") && mkdir -p "$keep" ;;
	r) [ "$OPTARG" = none ] && servers=svcdb ;;
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

cachegrind=(valgrind --tool=cachegrind --cache-sim=$cachesim)
[ $cachesim = yes ] && cachegrind+=(--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64)

# irefs SERVER TEST N C: the server's instructions (and, with -i, its I1
# misses after a space) over one run.
irefs() {
	local srv=$1 test=$2 n=$3 c=$4 port pid log=$work/valgrind.log dir=$work/data
	local out=/dev/null
	[ -n "$keep" ] && out=$keep/$srv-$test-c$c-n$n.out
	rm -rf "$dir" && mkdir -p "$dir"
	# a random port below the kernel's ephemeral range (where the clients'
	# own ports come from, so a listener there can find its port taken);
	# another one if it is taken
	local ephemeral
	ephemeral=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	for _ in 1 2 3 4 5; do
		port=$((10000 + RANDOM % (ephemeral - 10000)))
		redis-cli -p $port ping >/dev/null 2>&1 || break
	done
	if [ "$srv" = redis ]; then
		"${cachegrind[@]}" --cachegrind-out-file="$out" \
			redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$log" 2>&1 &
	else
		(cd "$dir" && exec "${cachegrind[@]}" --cachegrind-out-file="$out" \
			"$svcdb" --port $port --http-port 0 --save '' >"$log" 2>&1) &
	fi
	pid=$!
	local up=no
	for _ in $(seq 300); do
		redis-cli -p $port ping >/dev/null 2>&1 && up=yes && break
		sleep 0.2
	done
	if [ $up = no ] || ! redis-benchmark -p $port -P "$pipeline" -c "$c" -n "$n" -t "$test" -q >/dev/null 2>&1; then
		echo "cmdinstr: $srv on port $port did not serve $test (its log: $(tail -3 "$log"))" >&2
		kill $pid 2>/dev/null || true
		wait $pid || true
		exit 1
	fi
	redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true
	wait $pid || true
	local ir i1
	ir=$(grep 'I *refs' "$log" | sed 's/.*refs: *//; s/,//g')
	i1=$(grep 'I1 *misses' "$log" | sed 's/.*misses: *//; s/,//g')
	echo "$ir ${i1:-0}"
}

if [ $cachesim = yes ]; then
	printf '%-8s %3s %2s %10s %10s %6s %8s %8s\n' test c P svcdb redis ratio I1svcdb I1redis
else
	printf '%-8s %3s %2s %10s %10s %6s\n' test c P svcdb redis ratio
fi
for c in ${clients//,/ }; do
	for t in ${tests//,/ }; do
		declare -A per=() miss=()
		per[redis]=0 miss[redis]=0
		for srv in $servers; do
			read -r a am <<<"$(irefs $srv "$t" "$n1" "$c")"
			read -r b bm <<<"$(irefs $srv "$t" "$n2" "$c")"
			[ -n "$a" ] && [ -n "$b" ] || exit 1 # irefs said why
			per[$srv]=$(((b - a) / (n2 - n1)))
			miss[$srv]=$(echo "scale=2; ($bm - $am) / ($n2 - $n1)" | bc -l)
			if [ -n "$keep" ]; then
				cg_diff "$keep/$srv-$t-c$c-n$n1.out" "$keep/$srv-$t-c$c-n$n2.out" \
					>"$keep/$srv-$t-c$c.diff"
			fi
		done
		ratio=$(echo "${per[svcdb]} / (${per[redis]} + (${per[redis]} == 0))" | bc -l)
		if [ $cachesim = yes ]; then
			printf '%-8s %3s %2s %10s %10s %6.2f %8s %8s\n' "$t" "$c" "$pipeline" \
				"${per[svcdb]}" "${per[redis]}" "$ratio" "${miss[svcdb]}" "${miss[redis]}"
		else
			printf '%-8s %3s %2s %10s %10s %6.2f\n' "$t" "$c" "$pipeline" \
				"${per[svcdb]}" "${per[redis]}" "$ratio"
		fi
	done
done
