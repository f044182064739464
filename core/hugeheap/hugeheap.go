// Package hugeheap puts the Go heap on transparent huge pages (2 MiB),
// from inside the process, where the kernel's THP mode is "madvise" or
// "always". Go's runtime never asks for huge pages for heap memory (only
// for its own metadata), so without this package a 1.4 GB keyspace lives
// on 4 KiB pages and a GET's three random touches (index bucket, slot, key
// and value) are three TLB misses, each a two-dimensional page walk on a
// virtual machine.
//
// How: madvise(MADV_COLLAPSE), one aligned 2 MiB block at a time, of the
// heap's blocks whose 512 pages are all resident (read from
// /proc/self/pagemap). The kernel copies the block into one huge page and
// maps it with one page-middle-directory entry. Nothing else changes:
// MADV_HUGEPAGE is never set, so page faults still get 4 KiB pages and
// khugepaged (which under "madvise" only scans advised mappings) never
// touches the heap. Both choices keep the resident set where the runtime
// puts it. A block with a page the runtime's scavenger returned
// (MADV_DONTNEED of a free run) is not resident in full and is left alone:
// collapsing it would bring the returned page back, and with
// MADV_HUGEPAGE set, khugepaged would collapse such blocks on its own
// (max_ptes_none 511 lets it fill 511 absent pages of 512), undoing the
// scavenger's work, and a fault in a fresh arena would take 2 MiB at
// once. A release inside a collapsed block splits its mapping back into
// 4 KiB entries; the next full rescan collapses it again once all its
// pages are back.
//
// Which mappings are the heap: Go 1.26 places its heap arenas at a random
// base in the 48-bit address space and grows them upwards from there
// (runtime/malloc.go, arena hints), while every other anonymous mapping
// (the runtime's metadata, thread stacks, shard/bigbuf's regions) comes
// from mmap without a hint, at the top of the address space. Each pass
// takes the address of an object it allocates: the 1 TiB window around it
// holds the heap, and every readable and writable anonymous mapping of
// /proc/self/maps in such a window is the heap's. Reserved arena space not
// mapped yet (PROT_NONE) is skipped.
//
// What it must never do: run on a path a command waits for. A pass reads
// /proc/self/maps (tens of microseconds for a Go server's few dozen
// mappings) and 4 KiB of pagemap per block not collapsed yet, and
// collapses blocks one at a time (a copy of 2 MiB each, during which a
// fault on that block waits); it runs in a background goroutine every
// second. Blocks found collapsed are not read again until the full rescan
// (every RescanEvery passes). A collapse cannot be made cheap for the
// data path by priority: the kernel copies the block without yielding its
// CPU (6.8-7.0 ms on this KVM guest, the collapsing thread at SCHED_IDLE
// notwithstanding) while holding the address space's lock, so a server
// pinned to one CPU stalls its event loop for every collapse, and a
// faulting or mmapping loop on another CPU waits for the lock. So a
// Collapser with MaxBusy collapses only after a second in which the process
// used less CPU than that: a busy server's new blocks wait for a quiet
// second (docs/performance.md, "memtier's p99.9 at pipeline 16 on a
// filled keyspace"). It imports nothing of ours.
package hugeheap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
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

// hugeSize is the size of a transparent huge page on amd64 (and arm64
// with 4 KiB base pages): one page-middle-directory entry.
const hugeSize = 2 << 20

// span is the address range [start, end).
type span struct{ start, end uintptr }

// Collapser collapses the heap's fully resident blocks, one pass at a
// time. It is not safe for concurrent use: one goroutine owns it.
type Collapser struct {
	// RescanEvery is how many passes apart every block is read again,
	// collapsed ones included (0: never after the first).
	RescanEvery int

	// MaxBusy is the most CPU (CPU-seconds a second, over the process'
	// threads but the collapsing one) the process may have used since the
	// previous pass for this pass to collapse anything, and since the
	// previous collapse for the pass to go on; 0: no limit. A collapse is
	// kernel work that does not yield: it holds the CPU it runs on for its
	// whole copy (6.8-7.0 ms each on this KVM guest, SCHED_IDLE or not)
	// and the address space's lock, so on a busy server every collapse is
	// a stall of the event loop's thread. A pass over the limit skips the
	// heap (Skipped counts it) and the blocks wait for a quieter second.
	MaxBusy float64
	// Skipped is the number of passes that found the process busier than
	// MaxBusy; read it atomically.
	Skipped atomic.Int64

	lastCPU, lastWall time.Duration // processCPU and monoNow at the previous sample (busy)

	windows map[uintptr]struct{}
	done    map[uintptr]struct{} // blocks collapsed, or refused for good, since the last rescan
	passes  int
	pagemap *os.File
	entries []byte // one block's pagemap entries
	// Collapsed is the number of blocks collapsed so far (a block split
	// and collapsed again counts twice); read it atomically.
	Collapsed atomic.Int64
}

// probe keeps the last pass' heap object reachable, so that the compiler
// must put it on the heap.
var probe atomic.Pointer[[64]byte]

// mapsPath and pagemapPath are read by Pass; variables for tests.
var (
	mapsPath    = "/proc/self/maps"
	pagemapPath = "/proc/self/pagemap"
)

// pageSize is the base page: pagemap has one 8-byte entry per page.
var pageSize = uintptr(os.Getpagesize())

// Pass collapses every fully resident heap block not collapsed yet and
// returns how many it collapsed. An error means /proc or madvise refused
// (not Linux, THP "never" or absent): the caller reports it and may stop
// calling.
func (c *Collapser) Pass() (int, error) {
	if c.windows == nil {
		c.windows = make(map[uintptr]struct{})
		c.done = make(map[uintptr]struct{})
		c.entries = make([]byte, hugeSize/pageSize*8)
		f, err := os.Open(pagemapPath)
		if err != nil {
			return 0, err
		}
		c.pagemap = f
	}
	c.passes++
	if c.RescanEvery > 0 && c.passes%c.RescanEvery == 0 {
		clear(c.done)
	}
	if c.busy() {
		c.Skipped.Add(1)
		return 0, nil
	}
	p := new([64]byte)
	probe.Store(p)
	c.windows[uintptr(unsafe.Pointer(p))>>windowShift] = struct{}{}
	maps, err := c.heapMappings()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range maps {
		for b := (m.start + hugeSize - 1) &^ (hugeSize - 1); b+hugeSize <= m.end; b += hugeSize {
			if _, ok := c.done[b]; ok {
				continue
			}
			full, err := c.resident(b)
			if err != nil {
				return n, err
			}
			if !full {
				continue
			}
			if n > 0 && c.busy() {
				// The process got busy during this pass (a load began
				// while a quiet second's blocks were being collapsed):
				// the rest wait for the next quiet pass.
				c.Skipped.Add(1)
				c.Collapsed.Add(int64(n))
				return n, nil
			}
			switch err := madvise(span{b, b + hugeSize}, unix.MADV_COLLAPSE); err {
			case nil:
				c.done[b] = struct{}{}
				n++
			case unix.EAGAIN, unix.ENOMEM:
				// No huge page at hand now: the next pass tries again.
			case unix.EINVAL:
				// Not eligible (THP "never", a mapping the runtime
				// marked MADV_NOHUGEPAGE, Linux before 6.1 without
				// MADV_COLLAPSE): not asked again until the rescan.
				c.done[b] = struct{}{}
			default:
				return n, err
			}
		}
	}
	c.Collapsed.Add(int64(n))
	return n, nil
}

// processCPU and monoNow are the CPU time of the process' other threads
// than the caller's and a monotonic clock: variables for tests.
var (
	processCPU = func() time.Duration {
		var self, thread unix.Rusage
		if unix.Getrusage(unix.RUSAGE_SELF, &self) != nil || unix.Getrusage(unix.RUSAGE_THREAD, &thread) != nil {
			return 0
		}
		// The process but this thread: Run's passes run locked to one
		// thread, whose own collapses must not read as the server's work.
		return time.Duration(self.Utime.Nano() + self.Stime.Nano() - thread.Utime.Nano() - thread.Stime.Nano())
	}
	start   = time.Now()
	monoNow = func() time.Duration { return time.Since(start) }
)

// busy reports whether the process (but the collapsing thread) used more
// than MaxBusy CPUs since the previous sample (never at the first, nor
// with MaxBusy 0), and takes a sample. Pass samples at its start and
// before each collapse after the first: a load that begins while a quiet
// second's blocks are being collapsed stops the pass (pinned to one CPU,
// the loop runs between two collapses for as long as it has work, so the
// others' share of that interval is high exactly when it is busy).
func (c *Collapser) busy() bool {
	if c.MaxBusy <= 0 {
		return false
	}
	cpu, wall := processCPU(), monoNow()
	first := c.lastWall == 0
	dc, dw := cpu-c.lastCPU, wall-c.lastWall
	c.lastCPU, c.lastWall = cpu, wall
	return !first && dw > 0 && float64(dc) > c.MaxBusy*float64(dw)
}

// heapMappings reads /proc/self/maps and returns the anonymous read-write
// mappings in the heap's windows.
func (c *Collapser) heapMappings() ([]span, error) {
	f, err := os.Open(mapsPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var maps []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s, ok := parseMapsLine(sc.Bytes()); ok {
			if _, in := c.windows[s.start>>windowShift]; in {
				maps = append(maps, s)
			}
		}
	}
	return maps, sc.Err()
}

// resident reports whether every page of the block at b is present, from
// its pagemap entries (bit 63: present; the page frame numbers, which
// need CAP_SYS_ADMIN, are not used).
func (c *Collapser) resident(b uintptr) (bool, error) {
	if _, err := c.pagemap.ReadAt(c.entries, int64(b/pageSize*8)); err != nil {
		return false, err
	}
	return allPresent(c.entries), nil
}

func allPresent(entries []byte) bool {
	for i := 0; i+8 <= len(entries); i += 8 {
		if binary.LittleEndian.Uint64(entries[i:])>>63 == 0 {
			return false
		}
	}
	return true
}

// Close releases the pagemap file.
func (c *Collapser) Close() {
	if c.pagemap != nil {
		_ = c.pagemap.Close()
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

// Run, at once and then every tick until done is closed, calls c.Pass and
// then reads AnonHugeBytes and publishes it (Published). A nil c only
// measures. An error goes to onErr (may be nil) once: a Pass error stops
// the collapsing, a reading error the measuring. It is meant for its own
// goroutine.
func Run(done <-chan struct{}, tick time.Duration, c *Collapser, onErr func(error)) {
	report := func(err error) {
		if onErr != nil {
			onErr(err)
		}
	}
	if c != nil {
		defer idleThread(report)()
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	measureFailed := false
	for {
		if c != nil {
			if _, err := c.Pass(); err != nil {
				report(err)
				c.Close()
				c = nil
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
			if c != nil {
				c.Close()
			}
			return
		case <-t.C:
		}
	}
}

// idleThread moves the calling goroutine to a thread of its own that the
// kernel runs only when nothing else wants its CPU (SCHED_IDLE), and
// returns what puts the thread back. A collapse copies 2 MiB in the kernel
// (6.4 ms of CPU each on this KVM guest): on a process pinned to one CPU,
// at normal priority, each one took the CPU from the event loop while a
// keyspace grew, pieces that showed in pipeline-16 p99. At idle priority
// the collapses fill the loop's idle time instead. No other goroutine may
// ever run at idle priority: the returned func sets the thread back to
// SCHED_NORMAL before unlocking it, and where the kernel refuses that
// (leaving SCHED_IDLE needs CAP_SYS_NICE or RLIMIT_NICE) it keeps the
// thread locked, and the runtime ends it with the goroutine. A kernel that
// refuses SCHED_IDLE is reported, and the collapses run at normal priority.
func idleThread(report func(error)) (restore func()) {
	runtime.LockOSThread()
	idle := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if err := unix.SchedSetAttr(0, &idle, 0); err != nil {
		report(fmt.Errorf("hugeheap: SCHED_IDLE for the collapsing thread: %w", err))
		return runtime.UnlockOSThread
	}
	return func() {
		normal := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
		if unix.SchedSetAttr(0, &normal, 0) == nil {
			runtime.UnlockOSThread()
		}
	}
}
