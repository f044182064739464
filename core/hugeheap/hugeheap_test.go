package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParseMapsLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want span
		ok   bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", span{0xc000000000, 0xc004000000}, true},
		{"7fe4dc00000-7fe4e400000 rw-p 00000000 00:00 0                          [anon:Go: heap]", span{0x7fe4dc00000, 0x7fe4e400000}, true},
		{"3ff0c000000-3ff0dc00000 ---p 00000000 00:00 0 ", span{}, false}, // reserved arena space
		{"00795000-007b9000 rw-p 00195000 fe:00 9978294    /bin/svcdb", span{}, false},
		{"7ffd78270000-7ffd78291000 rw-p 00000000 00:00 0                          [stack]", span{}, false},
		{"7fe2fe328000-7fe2fe590000 rw-s 00000000 00:01 12 /dev/zero (deleted)", span{}, false},
		{"zz-10 rw-p 00000000 00:00 0", span{}, false},
		{"", span{}, false},
	} {
		got, ok := parseMapsLine([]byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("parseMapsLine(%q) = %x, %v", c.in, got, ok)
		}
	}
}

func TestAllPresent(t *testing.T) {
	e := make([]byte, 512*8)
	for i := 0; i < len(e); i += 8 {
		e[i+7] = 0x80 // bit 63
	}
	if !allPresent(e) {
		t.Error("all present: false")
	}
	e[100*8+7] = 0x40 // bit 62 (swapped), not present
	if allPresent(e) {
		t.Error("one page absent: true")
	}
}

func TestParseAnonHuge(t *testing.T) {
	in := "Rss:              220216 kB\nAnonymous:        219000 kB\nAnonHugePages:    210944 kB\nShmemPmdMapped:        0 kB\n"
	if n, err := parseAnonHuge([]byte(in)); err != nil || n != 210944<<10 {
		t.Errorf("parseAnonHuge = %d, %v", n, err)
	}
	if _, err := parseAnonHuge([]byte("Rss: 1 kB\n")); err != ErrNoField {
		t.Errorf("no field: %v", err)
	}
	if _, err := parseAnonHuge([]byte("AnonHugePages: x kB\n")); err == nil {
		t.Error("bad number accepted")
	}
}

// thpMode is the kernel's THP mode ("always", "madvise" or "never"), "" if
// unknown.
func thpMode(t *testing.T) string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return ""
}

// TestPassPutsHeapOnHugePages: 64 MiB of the heap, touched on 4 KiB
// pages, are on huge pages after one Pass, where the kernel allows THP;
// a block the test returns a page of to the kernel is left alone; a second
// pass collapses nothing new.
func TestPassPutsHeapOnHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if m := thpMode(t); m != "madvise" && m != "always" {
		t.Skipf("THP mode %q", m)
	}
	before, err := AnonHugeBytes()
	if err != nil {
		t.Fatal(err)
	}
	blocks := make([][]byte, 64)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	c := &Collapser{}
	defer c.Close()
	n, err := c.Pass()
	if err != nil {
		t.Fatal(err)
	}
	after, err := AnonHugeBytes()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("collapsed %d blocks; AnonHugePages %d -> %d MiB", n, before>>20, after>>20)
	if n < 16 || after-before < 32<<20 {
		t.Errorf("collapsed %d blocks, AnonHugePages grew by %d bytes: want at least half the 64 MiB", n, after-before)
	}
	if n2, err := c.Pass(); err != nil || n2 > 4 {
		t.Errorf("second pass collapsed %d blocks (%v), want only what the heap grew by", n2, err)
	}
	heldBlocks = append(heldBlocks, blocks...)
}

// heldBlocks keeps every run's blocks of TestPassPutsHeapOnHugePages alive
// to the end of the process, so that a later run (go test -count=N) gets
// fresh heap from the OS to collapse rather than the blocks an earlier run
// already put on huge pages and the collector freed.
var heldBlocks [][]byte

func TestPassSkipsReleasedPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if m := thpMode(t); m != "madvise" && m != "always" {
		t.Skipf("THP mode %q", m)
	}
	// An anonymous mapping of our own in the heap's window is not
	// guaranteed; the check is on the block test itself: a 2 MiB block
	// with one page returned is not fully resident.
	m, err := unix.Mmap(-1, 0, 4*hugeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Munmap(m) }()
	for i := 0; i < len(m); i += 4096 {
		m[i] = 1
	}
	base := uintptr(unsafe.Pointer(&m[0]))
	b := (base + hugeSize - 1) &^ (hugeSize - 1)
	c := &Collapser{}
	defer c.Close()
	if _, err := c.Pass(); err != nil { // opens pagemap
		t.Fatal(err)
	}
	if full, err := c.resident(b); err != nil || !full {
		t.Fatalf("touched block: resident %v, %v", full, err)
	}
	off := b - base + 4096
	if err := unix.Madvise(m[off:off+4096], unix.MADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if full, err := c.resident(b); err != nil || full {
		t.Fatalf("block with a page returned: resident %v, %v", full, err)
	}
}

// idleThreads counts this process' threads whose scheduling policy is
// SCHED_IDLE (field 41 of /proc/self/task/TID/stat).
func idleThreads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:]) // after "pid (comm) "
		if f := strings.Fields(rest); len(f) > 38 && f[38] == "5" { // field 41: policy
			n++
		}
	}
	return n
}

// TestRunCollapsesOnAnIdleThread: Run with a Collapser does its passes on a
// thread of its own at SCHED_IDLE, and no thread is left at idle priority
// when Run returns (put back to SCHED_NORMAL, as root, or ended), so no
// other goroutine ever runs at it.
func TestRunCollapsesOnAnIdleThread(t *testing.T) {
	if n := idleThreads(t); n != 0 {
		t.Fatalf("%d SCHED_IDLE threads before Run", n)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		Run(done, 10*time.Millisecond, &Collapser{}, func(err error) { t.Error(err) })
	}()
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); idleThreads(t) != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("SCHED_IDLE threads: %d, want %d", idleThreads(t), want)
			}
		}
	}
	waitFor(1)
	close(done)
	<-exited
	waitFor(0)
}

// TestPassWaitsWhileTheProcessIsBusy: a Collapser with MaxBusy collapses
// nothing after an interval in which the process used more CPU than that
// (counted in Skipped), and collapses again after a quiet one; the first
// pass, with no interval behind it, is never skipped, nor is any pass
// without MaxBusy.
func TestPassWaitsWhileTheProcessIsBusy(t *testing.T) {
	oldCPU, oldNow := processCPU, monoNow
	defer func() { processCPU, monoNow = oldCPU, oldNow }()
	var cpu, wall time.Duration
	processCPU = func() time.Duration { return cpu }
	monoNow = func() time.Duration { return wall }
	advance := func(w, c time.Duration) { wall += w; cpu += c }

	c := &Collapser{MaxBusy: 0.25}
	defer c.Close()
	wall = time.Hour
	for i, s := range []struct {
		wall, cpu time.Duration
		skipped   int64
	}{
		{0, 0, 0},                                           // the first pass
		{time.Second, 900 * time.Millisecond, 1},            // a busy second: skipped
		{time.Second, 2 * time.Second, 2},                   // two busy CPUs
		{time.Second, 100 * time.Millisecond, 2},            // a quiet second: collapses
		{time.Second, 250 * time.Millisecond, 2},            // at the limit: collapses
		{500 * time.Millisecond, 200 * time.Millisecond, 3}, // the rate counts, not the total
	} {
		advance(s.wall, s.cpu)
		if _, err := c.Pass(); err != nil {
			t.Skipf("pass %d: %v (no /proc here)", i, err)
		}
		if got := c.Skipped.Load(); got != s.skipped {
			t.Fatalf("pass %d (%v of CPU in %v): Skipped = %d, want %d", i, s.cpu, s.wall, got, s.skipped)
		}
	}
	free := &Collapser{}
	defer free.Close()
	for range 3 {
		advance(time.Second, 2*time.Second)
		if _, err := free.Pass(); err != nil {
			t.Fatal(err)
		}
	}
	if n := free.Skipped.Load(); n != 0 {
		t.Errorf("MaxBusy 0: %d passes skipped", n)
	}
}

// TestBusyPassLeavesBlocksForAQuietOne: where the kernel gives huge
// pages, a busy pass leaves fully resident blocks as they are and the next
// quiet pass collapses them.
func TestBusyPassLeavesBlocksForAQuietOne(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if m := thpMode(t); m != "madvise" && m != "always" {
		t.Skipf("THP mode %q", m)
	}
	oldCPU, oldNow := processCPU, monoNow
	defer func() { processCPU, monoNow = oldCPU, oldNow }()
	var cpu, wall time.Duration = 0, time.Hour
	processCPU = func() time.Duration { return cpu }
	monoNow = func() time.Duration { return wall }

	c := &Collapser{MaxBusy: 0.25}
	defer c.Close()
	if _, err := c.Pass(); err != nil { // the first pass: the heap as it is
		t.Fatal(err)
	}
	blocks := make([][]byte, 32)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	wall, cpu = wall+time.Second, cpu+time.Second
	if n, err := c.Pass(); err != nil || n != 0 || c.Skipped.Load() != 1 {
		t.Fatalf("busy pass: collapsed %d (%v), skipped %d; want 0 and 1", n, err, c.Skipped.Load())
	}
	wall, cpu = wall+time.Second, cpu+10*time.Millisecond
	n, err := c.Pass()
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Errorf("quiet pass after the busy one collapsed %d blocks, want at least 4 of the 32 MiB", n)
	}
	heldBlocks = append(heldBlocks, blocks...)

	// A load that begins during a quiet second's pass: after the first
	// collapse the others use a whole CPU, and the pass stops.
	more := make([][]byte, 32)
	for i := range more {
		more[i] = make([]byte, 1<<20)
		for j := 0; j < len(more[i]); j += 4096 {
			more[i][j] = 1
		}
	}
	wall, cpu = wall+time.Second, cpu+10*time.Millisecond
	calls := 0
	processCPU = func() time.Duration {
		if calls++; calls > 1 { // the pass' first sample is the quiet second's
			cpu += 10 * time.Millisecond
			wall += 10 * time.Millisecond
		}
		return cpu
	}
	skipped := c.Skipped.Load()
	if n, err := c.Pass(); err != nil || n != 1 || c.Skipped.Load() != skipped+1 {
		t.Errorf("pass into which a load came: collapsed %d (%v), skipped %d more; want 1 and 1", n, err, c.Skipped.Load()-skipped)
	}
	heldBlocks = append(heldBlocks, more...)
}
