package netloop_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestManyArgumentsCommand sends one RPUSH of a million arguments in
// random pieces, which netloop reads into the client's own query buffer
// (sized from the arguments read so far) and the parser returns mostly
// from its second pass over the headers (core/resp: rescan). Every element
// must arrive as sent, including empty ones and ones holding CR, LF and
// '$'. Afterwards the client, still connected, must not keep the
// command's argument slice (24 MB of headers): the in-process heap, after
// the list is deleted and two collections, is back within 12 MB of what
// it was before the command. Under the race detector (ten times slower,
// and allocating on its own) it sends 200,000 arguments and checks only
// that they arrive.
func TestManyArgumentsCommand(t *testing.T) {
	ts := startServer(t)
	n := 1_000_000
	if raceOn {
		n = 200_000
	}
	elems := make([]string, n)
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n$5\r\nRPUSH\r\n$4\r\nlist\r\n", n+2)
	for i := range elems {
		switch i % 1000 {
		case 1:
			elems[i] = ""
		case 2:
			elems[i] = "a\r\n$3\r\nb\r"
		case 3:
			elems[i] = strings.Repeat("z", 3000)
		default:
			elems[i] = strconv.Itoa(i)
		}
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", len(elems[i]), elems[i])
	}
	in := sb.String()

	r := dialRaw(t, ts.Addr)
	if v := r.do("PING"); string(v.Str) != "PONG" {
		t.Fatalf("PING: %s", v)
	}
	before := heapAfterGC()
	rng := rand.New(rand.NewPCG(3, 4))
	go func() {
		for rest := in; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(256<<10))
			if _, err := r.c.Write([]byte(rest[:k])); err != nil {
				return
			}
			rest = rest[k:]
		}
	}()
	if v, err := r.tryRead(time.Minute); err != nil || v.Int != int64(n) {
		t.Fatalf("RPUSH: %s %v", v, err)
	}

	check := dialRaw(t, ts.Addr)
	const chunk = 20_000
	for from := 0; from < n; from += chunk {
		check.write(multibulk("LRANGE", "list", strconv.Itoa(from), strconv.Itoa(from+chunk-1)))
		v, err := check.tryRead(time.Minute)
		if err != nil || len(v.Elems) != chunk {
			t.Fatalf("LRANGE from %d: %d elements, %v", from, len(v.Elems), err)
		}
		for i, e := range v.Elems {
			if string(e.Str) != elems[from+i] {
				t.Fatalf("element %d is %q, sent %q", from+i, e.Str, elems[from+i])
			}
		}
	}
	check.c.Close()

	if v := r.do("DEL", "list"); v.Int != 1 {
		t.Fatalf("DEL: %s", v)
	}
	after := heapAfterGC()
	runtime.KeepAlive(in)
	runtime.KeepAlive(elems)
	t.Logf("heap before %d MB, after %d MB", before>>20, after>>20)
	if !raceOn && after > before+12<<20 {
		t.Fatalf("heap after the command and DEL is %d MB, %d MB before: the client kept its arguments", after>>20, before>>20)
	}
}

// heapAfterGC is the live heap of the test process (the server runs in
// it) after two collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestManyArgumentsBothEnds pushes many elements in one LPUSH and then one
// RPUSH onto the same list, with list-compress-depth 1 so that the nodes
// between the ends are compressed as they are made (values.Quicklist
// PushMany: the LPUSH fills each new node from its back, and the RPUSH
// starts in the node already at the tail). The list must read back, in
// chunks, as the pushes one by one would have left it: the LPUSH's
// elements reversed, then the RPUSH's in order.
func TestManyArgumentsBothEnds(t *testing.T) {
	ts := startServer(t)
	r := dialRaw(t, ts.Addr)
	if v := r.do("CONFIG", "SET", "list-compress-depth", "1"); string(v.Str) != "OK" {
		t.Fatalf("CONFIG SET: %s", v)
	}
	n := 300_000
	if raceOn {
		n = 60_000
	}
	elem := func(i int) string {
		if i%997 == 500 {
			return strings.Repeat("y", 9000+i%5000) // a node of its own
		}
		return "element:" + strconv.Itoa(i)
	}
	var want []string
	push := func(cmd string, from, to int) {
		t.Helper()
		args := []string{cmd, "list"}
		for i := from; i < to; i++ {
			args = append(args, elem(i))
		}
		var sb strings.Builder // multibulk is quadratic in the arguments
		fmt.Fprintf(&sb, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&sb, "$%d\r\n%s\r\n", len(a), a)
		}
		r.write(sb.String())
		if v, err := r.tryRead(time.Minute); err != nil || v.Int != int64(len(want)+to-from) {
			t.Fatalf("%s: %s %v", cmd, v, err)
		}
		if cmd == "LPUSH" {
			pushed := args[2:]
			slices.Reverse(pushed)
			want = append(pushed, want...)
		} else {
			want = append(want, args[2:]...)
		}
	}
	push("RPUSH", 0, 3) // a short list first: the LPUSH starts in its node
	push("LPUSH", 3, n/2)
	push("RPUSH", n/2, n)
	const chunk = 20_000
	for from := 0; from < len(want); from += chunk {
		v := r.do("LRANGE", "list", strconv.Itoa(from), strconv.Itoa(from+chunk-1))
		if len(v.Elems) != min(chunk, len(want)-from) {
			t.Fatalf("LRANGE from %d: %d elements", from, len(v.Elems))
		}
		for i, e := range v.Elems {
			if string(e.Str) != want[from+i] {
				t.Fatalf("element %d is %.20q, want %.20q", from+i, e.Str, want[from+i])
			}
		}
	}
}
