#!/usr/bin/env python3
"""codelines.py: the code footprint of a command stream, from two callgrind runs.

    codelines.py SHORT.out LONG.out BATCHES [TOP]

SHORT.out and LONG.out are callgrind outputs of the same binary (Go builds are
not position-independent: addresses match between runs) under the same
stream, N1 and N2 commands, recorded with per-instruction counts:

    GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --dump-instr=yes \\
        --callgrind-out-file=SHORT.out bin/svcdb --port P --http-port 0 --save ''
    redis-benchmark -p P -P 16 -c 1 -n N1 -t get    # then LONG.out with N2

(Go's asynchronous preemption signals crash callgrind 3.19 without the
GODEBUG.) BATCHES is the number of reads the N2-N1 difference made, e.g.
(N2-N1)/16 at -P 16 with one client. It prints the 64-byte lines of code that
ran at least once per batch (the footprint a level-1 instruction cache of 512
lines, 64 sets of 8 ways, must hold), how they fall on the sets, how many ran
at least once per command, and per function: hot lines, the lines its
executed bytes would fill if dense, and instructions per command.
docs/performance.md, "Instruction-cache misses on the hot path", has the use.
"""
import bisect
import collections
import re
import sys


def load(path):
    """Per-instruction self counts (Ir) and each address' function."""
    names, cnt, owner = {}, collections.Counter(), {}
    addr, fn, skip = 0, None, False
    for line in open(path):
        if not line.strip():
            continue
        c = line[0]
        if c.isdigit() or c in '+-*':
            parts = line.split()
            a = parts[0]
            if a.startswith('0x'):
                addr = int(a, 16)
            elif a[0] == '+':
                addr += int(a[1:])
            elif a[0] == '-':
                addr -= int(a[1:])
            if skip:  # the inclusive cost of the call on the line before
                skip = False
                continue
            cnt[addr] += int(parts[2]) if len(parts) > 2 else 0
            owner[addr] = fn
        elif line.startswith(('fn=', 'cfn=')):
            m = re.match(r'c?fn=\((\d+)\)(?: (.*))?', line.rstrip('\n'))
            if m and m.group(2) is not None:
                names[m.group(1)] = m.group(2)
            if line.startswith('fn='):
                fn = names.get(m.group(1), '?') if m else line[3:].strip()
        elif line.startswith('calls='):
            skip = True
    return cnt, owner


def main():
    short, long_, batches = sys.argv[1], sys.argv[2], float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    c1, _ = load(short)
    c2, owner = load(long_)
    cnt = {a: c2[a] - c1.get(a, 0) for a in c2}
    per_line, line_owner = collections.defaultdict(int), {}
    for a, v in cnt.items():
        if v > per_line[a >> 6]:
            per_line[a >> 6], line_owner[a >> 6] = v, owner[a]
    hot = [ln for ln, v in per_line.items() if v >= 0.9 * batches]
    per_cmd = [ln for ln in hot if per_line[ln] >= 0.9 * batches * 16]
    sets = collections.Counter(ln & 63 for ln in hot)
    over = {s: n for s, n in sets.items() if n > 8}
    print('lines run at least once per batch: %d (%.1f KiB); at least 16 times (once per command at -P 16): %d'
          % (len(hot), len(hot) / 16, len(per_cmd)))
    print('sets holding more than 8 of them: %d, with %d lines; deepest set: %d'
          % (len(over), sum(over.values()), max(sets.values())))
    executed = sorted(a for a, v in cnt.items() if v > 0)
    funcs = collections.defaultdict(lambda: [set(), 0, 0])
    for a, v in cnt.items():
        if v <= 0:
            continue
        f = funcs[(owner[a] or '?').replace("'2", '')]
        f[2] += v
        if v >= 0.9 * batches:
            i = bisect.bisect_right(executed, a)
            size = min(executed[i] - a, 7) if i < len(executed) else 4
            f[0].add(a >> 6)
            f[1] += size
    print('%5s %6s %9s  %s' % ('lines', 'dense', 'Ir/cmd', 'function'))
    rows = sorted(funcs.items(), key=lambda kv: -len(kv[1][0]))
    for name, (lines, size, ir) in rows[:top]:
        if lines:
            print('%5d %6.1f %9.1f  %s' % (len(lines), size / 64, ir / batches / 16, name))


if __name__ == '__main__':
    main()
