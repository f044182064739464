// Package hugeheap puts the Go heap on transparent huge pages (2 MiB) where
// the kernel's THP mode is "madvise", by calling madvise(MADV_HUGEPAGE) on
// the heap's mappings from inside the process. Go's runtime never does so
// for heap memory (only for its own metadata), so without this package a
// 1.4 GB keyspace lives on 4 KiB pages and a GET's three random touches
// (index bucket, slot, key and value) are three TLB misses, each a
// two-dimensional page walk on a virtual machine.
//
// Which mappings are the heap: Go 1.26 places its heap arenas at a random
// base in the 48-bit address space and grows them upwards from there, one
// 64 MiB arena after the other (runtime/malloc.go, arena hints), while
// every other anonymous mapping (the runtime's metadata, thread stacks,
// shard/bigbuf's regions, C libraries) comes from mmap without a hint, at
// the top of the address space. The Advisor takes the address of an object
// it allocates on each pass: the 1 TiB window around it holds the heap, and
// every readable and writable anonymous mapping of /proc/self/maps in such
// a window is advised. Reserved but not yet mapped arena space (PROT_NONE)
// is skipped: the runtime maps it later with mmap(MAP_FIXED), which makes a
// new mapping without the flag, so each pass advises what is new since the
// last one. Advised ranges are remembered and never advised again: the
// runtime never unmaps arena memory, and madvise(MADV_HUGEPAGE) takes the
// process' mmap lock for writing, which the data path's page faults wait
// for.
//
// What huge pages change: a page fault in an advised range whose aligned
// 2 MiB block lies inside the mapping is served with one 2 MiB page
// (defrag "madvise": the fault may compact memory to find one). Pages
// already present as 4 KiB stay so until khugepaged collapses them (slowly:
// 4096 pages every 10 s by default) or until Collapse asks for
// madvise(MADV_COLLAPSE). A 4 KiB release inside a huge page (the Go
// scavenger's MADV_DONTNEED of a free run) splits it, and the resident set
// can hold the untouched rest of a partly used 2 MiB page: the cost is
// measured in docs/performance.md ("Huge pages for the keyspace").
//
// What it must never do: run on a path a command waits for. A pass reads
// /proc/self/maps (tens of microseconds for a Go server's few dozen
// mappings) and makes at most a few madvise calls; it runs in a background
// goroutine every few seconds. It imports nothing of ours.
package hugeheap

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// windowShift is the size of the address window that one heap object
// vouches for: 1 TiB, the distance between two of the runtime's arena
// hints (heapAddrBits 48, the top byte of the randomized base).
const windowShift = 40

// span is the address range [start, end).
type span struct{ start, end uintptr }

// Advisor advises the heap's new mappings, one pass at a time. It is not
// safe for concurrent use: one goroutine owns it.
type Advisor struct {
	// Collapse also asks for madvise(MADV_COLLAPSE) on each newly advised
	// range, turning the 4 KiB pages already present into huge pages at
	// once (synchronously, copying them) instead of waiting for
	// khugepaged.
	Collapse bool

	windows map[uintptr]struct{}
	advised []span // sorted, disjoint, merged where adjacent
	buf     []byte
	// Advised is the number of bytes advised so far, for status and
	// tests; read it atomically.
	Advised atomic.Int64
}

// probe keeps the last pass' heap object reachable, so that the compiler
// must put it on the heap.
var probe atomic.Pointer[[64]byte]

// mapsPath is read by Pass; a variable for this package's tests.
var mapsPath = "/proc/self/maps"

// Pass advises every heap mapping not advised yet and returns the bytes it
// advised in this pass. An error means /proc or madvise refused (not
// Linux, or a kernel without THP): the caller reports it once and may stop
// calling.
func (a *Advisor) Pass() (int64, error) {
	if a.windows == nil {
		a.windows = make(map[uintptr]struct{})
	}
	p := new([64]byte)
	probe.Store(p)
	a.windows[uintptr(unsafe.Pointer(p))>>windowShift] = struct{}{}

	f, err := os.Open(mapsPath)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	var maps []span
	sc := bufio.NewScanner(f)
	sc.Buffer(a.buf[:0], 1<<16)
	for sc.Scan() {
		if s, ok := parseMapsLine(sc.Bytes()); ok {
			if _, in := a.windows[s.start>>windowShift]; in {
				maps = append(maps, s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	var n int64
	for _, m := range maps {
		for _, s := range subtract(m, a.advised) {
			if err := madvise(s, unix.MADV_HUGEPAGE); err != nil {
				return n, err
			}
			if a.Collapse {
				collapse(s)
			}
			a.advised = insert(a.advised, s)
			n += int64(s.end - s.start)
		}
	}
	a.Advised.Add(n)
	return n, nil
}

// hugeSize is the size of a transparent huge page on amd64 (and arm64
// with 4 KiB base pages): one page-middle-directory entry.
const hugeSize = 2 << 20

// collapse asks for madvise(MADV_COLLAPSE) one aligned 2 MiB block of s at a
// time: each call then holds the block's page tables only while it copies
// that block, and a block the kernel refuses (EINVAL where a block is
// partly outside an eligible mapping, EAGAIN where no free huge page is at
// hand now, ENOMEM) leaves its 4 KiB pages in place without stopping the
// others; khugepaged may still collapse them later.
func collapse(s span) {
	for b := (s.start + hugeSize - 1) &^ (hugeSize - 1); b+hugeSize <= s.end; b += hugeSize {
		_ = madvise(span{b, b + hugeSize}, unix.MADV_COLLAPSE)
	}
}

// madvise takes the range as integers: it comes from /proc/self/maps and
// is never turned into a Go pointer.
func madvise(s span, advice int) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}

// parseMapsLine reads "start-end perms offset dev inode [path]" and
// returns the range of a private, readable and writable mapping of no file
// (an anonymous one: no path, or a name the kernel gives an anonymous
// mapping such as "[anon:...]"; never [stack], [heap] or a file).
func parseMapsLine(l []byte) (span, bool) {
	f := bytes.Fields(l)
	if len(f) < 5 || !bytes.Equal(f[1], []byte("rw-p")) || !bytes.Equal(f[4], []byte("0")) {
		return span{}, false
	}
	if len(f) > 5 && !bytes.HasPrefix(f[5], []byte("[anon:")) {
		return span{}, false
	}
	dash := bytes.IndexByte(f[0], '-')
	if dash < 0 {
		return span{}, false
	}
	start, err1 := strconv.ParseUint(string(f[0][:dash]), 16, 64)
	end, err2 := strconv.ParseUint(string(f[0][dash+1:]), 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return span{}, false
	}
	return span{uintptr(start), uintptr(end)}, true
}

// subtract returns the parts of m that no span of done covers; done is
// sorted and disjoint.
func subtract(m span, done []span) []span {
	var out []span
	cur := m.start
	for _, d := range done {
		if d.end <= cur || d.start >= m.end {
			continue
		}
		if d.start > cur {
			out = append(out, span{cur, d.start})
		}
		cur = max(cur, d.end)
	}
	if cur < m.end {
		out = append(out, span{cur, m.end})
	}
	return out
}

// insert adds s, disjoint from every span of done, keeping done sorted and
// merging adjacent spans.
func insert(done []span, s span) []span {
	i := 0
	for i < len(done) && done[i].start < s.start {
		i++
	}
	done = append(done, span{})
	copy(done[i+1:], done[i:])
	done[i] = s
	out := done[:0]
	for _, d := range done {
		if n := len(out); n > 0 && out[n-1].end == d.start {
			out[n-1].end = d.end
			continue
		}
		out = append(out, d)
	}
	return out
}

// smapsRollupPath is read by AnonHugeBytes; a variable for tests.
var smapsRollupPath = "/proc/self/smaps_rollup"

// ErrNoField is returned by AnonHugeBytes when smaps_rollup has no
// AnonHugePages line.
var ErrNoField = errors.New("hugeheap: smaps_rollup has no AnonHugePages")

// AnonHugeBytes returns the bytes of the process' anonymous memory that
// huge pages back now: AnonHugePages of /proc/self/smaps_rollup. The
// kernel walks every mapping's page tables to answer (a millisecond or two
// for a 1.4 GB heap), so it must never be called on the data path.
func AnonHugeBytes() (int64, error) {
	b, err := os.ReadFile(smapsRollupPath)
	if err != nil {
		return 0, err
	}
	return parseAnonHuge(b)
}

func parseAnonHuge(b []byte) (int64, error) {
	for l := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(l, []byte("AnonHugePages:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, errors.New("hugeheap: smaps_rollup: bad line " + strconv.Quote(string(l)))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, err
		}
		return kb << 10, nil
	}
	return 0, ErrNoField
}

// published is AnonHugeBytes as Run read it last.
var published atomic.Int64

// Published returns the huge-page bytes that Run read last: 0 before its
// first reading, and always 0 in a process that does not call Run. It is
// one atomic load, for INFO and metrics.
func Published() int64 { return published.Load() }

// Run calls a.Pass every tick until done is closed, then reads
// AnonHugeBytes and publishes it (Published). A nil a only measures. The
// first error of each kind goes to onErr (may be nil); a Pass error stops
// the advising, not the measuring. It is meant for its own goroutine.
func Run(done <-chan struct{}, tick time.Duration, a *Advisor, onErr func(error)) {
	report := func(err error) {
		if onErr != nil {
			onErr(err)
		}
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	measureFailed := false
	for {
		if a != nil {
			if _, err := a.Pass(); err != nil {
				report(err)
				a = nil
			}
		}
		if !measureFailed {
			if n, err := AnonHugeBytes(); err != nil {
				report(err)
				measureFailed = true
			} else {
				published.Store(n)
			}
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
