// Package bigbuf holds large byte buffers outside the Go heap, in private
// anonymous mmap regions: allocated with mmap, grown with
// mremap(MREMAP_MAYMOVE) (the kernel moves page table entries, it copies no
// data) and given back with munmap the moment their owner drops them.
//
// Why: a Go slice that grows is a new allocation plus a copy, and the old
// one stays resident until the garbage collector runs (GOGC 100 lets the
// heap reach twice what is live), so a string grown by APPEND to 200 MiB
// cost 623 MB of RSS and quadratic copying. Redis (jemalloc) extends huge
// allocations in place and frees them at once; this package does the same
// for the few buffers large enough to matter.
//
// # What it owns and must never do
//
// It owns the mappings and a process-wide count of mapped bytes (Mapped).
// It knows nothing about keys, shards or accounting, never keeps a
// reference to a buffer it handed out, and never frees one on its own.
//
// # The invariant its callers keep
//
// Every buffer has exactly one owner, and after Free (or a Grow that
// returned a new slice) the old slice and every slice cut from it are
// unreachable: the memory is gone, and a read of it is a segmentation fault
// or, once the address is mapped again, someone else's bytes. Callers must
// therefore never hand such a buffer out beyond the call that reads it: copy
// it into a reply, a log record or a snapshot instead.
package bigbuf

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Threshold is the length from which a string is worth a mapping of its
// own: 1 MiB, Redis' SDS_MAX_PREALLOC, where a growing string stops
// doubling and growth becomes a long run of copies on the Go heap. Below it
// the Go heap is the better home: a mapping costs two system calls and page
// faults on first touch, while the garbage a small string leaves is small.
// At 1 MiB the page rounding wastes at most 0.4% (4 KiB), and the
// process' mapping count (vm.max_map_count, 65530 by default) is no limit
// before 64 GiB of such strings.
const Threshold = 1 << 20

var (
	mapped   atomic.Int64 // bytes currently mapped, page-rounded
	stranded atomic.Int64 // address space freed but left reserved (Free)
	pageSize = unix.Getpagesize()
)

// Mapped is the bytes this process holds in bigbuf mappings, page-rounded.
func Mapped() int64 { return mapped.Load() }

// Stranded is the address space Free gave back the pages of but could not
// unmap (munmap failed with ENOMEM at vm.max_map_count). It holds no memory.
func Stranded() int64 { return stranded.Load() }

// pages rounds n up to whole pages.
func pages(n int) int { return (n + pageSize - 1) &^ (pageSize - 1) }

// Alloc returns a zeroed buffer of length n and capacity c (0 < n <= c). The
// mapping is c rounded up to pages; the slice's capacity is exactly c, and
// Free and Grow recompute the mapping from it, so the slice's capacity must
// never be cut (b[:i], never b[:i:j]). With populate the pages are faulted
// in by the mmap call itself (MAP_POPULATE), which is cheaper than one
// fault per page when the caller is about to write all of them; without
// it untouched pages cost no memory at all (a SETRANGE far past the end).
func Alloc(n, c int, populate bool) ([]byte, error) {
	if n <= 0 || c < n {
		panic("bigbuf: Alloc with n <= 0 or c < n")
	}
	flags := unix.MAP_PRIVATE | unix.MAP_ANON
	if populate {
		flags |= unix.MAP_POPULATE
	}
	size := pages(c)
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, err
	}
	mapped.Add(int64(size))
	return unsafe.Slice((*byte)(p), c)[:n], nil
}

// Grow returns b with length n and capacity c (len(b) <= n, cap(b) <= c):
// the bytes up to cap(b) kept, the rest zero. The mapping is extended where
// it lies or moved (mremap with MREMAP_MAYMOVE: the kernel remaps the
// pages, nothing is copied). On success b is dead: only the result may be
// used. On failure b is unchanged and still owned by the caller.
func Grow(b []byte, n, c int) ([]byte, error) {
	if len(b) > n || cap(b) > c {
		panic("bigbuf: Grow that shrinks")
	}
	oldSize, size := pages(cap(b)), pages(c)
	p := unsafe.Pointer(unsafe.SliceData(b))
	if size != oldSize {
		q, err := unix.MremapPtr(p, uintptr(oldSize), nil, uintptr(size), unix.MREMAP_MAYMOVE)
		if err != nil {
			return b, err
		}
		p = q
		mapped.Add(int64(size - oldSize))
	}
	// From cap(b) up to the old page end the bytes were never part of the
	// slice and are still the zeros the kernel mapped.
	return unsafe.Slice((*byte)(p), c)[:n], nil
}

// Free unmaps b, a buffer Alloc or Grow returned (at any length). b and
// every slice of it must never be used again.
func Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	size := pages(cap(b))
	err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(size))
	switch err {
	case nil:
	case unix.ENOMEM:
		// Unmapping the middle of a mapping the kernel merged with its
		// neighbours splits it, which fails at vm.max_map_count. The
		// pages still go back (they read as zeros until written); only
		// the address range stays reserved.
		_ = unix.Madvise(unsafe.Slice(unsafe.SliceData(b), size), unix.MADV_DONTNEED)
		stranded.Add(int64(size))
	default:
		// Only a bad address or length fails otherwise: a caller broke
		// the invariant, and going on could unmap someone else's memory.
		panic("bigbuf: BUG: munmap: " + err.Error())
	}
	mapped.Add(-int64(size))
}

// Zero sets b, a part of a bigbuf buffer, to zeros. Whole pages inside it
// are given back to the kernel (MADV_DONTNEED: they read as zeros again and
// cost no memory until written), so zeroing a large stale tail neither
// touches every page nor holds the goroutine in one long memclr.
func Zero(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := int((start+uintptr(pageSize)-1)&^uintptr(pageSize-1) - start)
	if len(b) < first+16*pageSize {
		clear(b)
		return
	}
	last := first + (len(b)-first)&^(pageSize-1)
	clear(b[:first])
	clear(b[last:])
	if err := unix.Madvise(b[first:last], unix.MADV_DONTNEED); err != nil {
		clear(b[first:last])
	}
}

// prefaultMin is the smallest range Prefault asks the kernel for: below it
// the system call costs about what the few page faults it saves do.
const prefaultMin = 64 << 10

// noPopulate is set once the kernel refused MADV_POPULATE_WRITE (before
// Linux 5.14), so Prefault stops asking.
var noPopulate atomic.Bool

// Prefault makes the pages under b, a part of a bigbuf buffer that the
// caller is about to write in full, resident and writable in one system
// call (MADV_POPULATE_WRITE) instead of one page fault per 4 KiB page as
// the write reaches it. Copying 200 MiB into fresh pages measured 230-620
// ms with faults and 155-290 ms prefaulted on the shared 2-core machine:
// the faults, not the copy, were most of an APPEND of 1 MiB to a large
// string. Pages already resident are left as they are; a kernel without
// the advice, or a range too small to be worth a call, is served by faults
// as before. It never changes what b holds.
func Prefault(b []byte) {
	if len(b) < prefaultMin || noPopulate.Load() {
		return
	}
	// The page holding b's first byte belongs to the same mapping (a
	// mapping starts on a page), and so does the one holding its last.
	p := unsafe.Pointer(unsafe.SliceData(b))
	into := int(uintptr(p) & uintptr(pageSize-1))
	first := unsafe.Add(p, -into)
	err := unix.Madvise(unsafe.Slice((*byte)(first), pages(into+len(b))), unix.MADV_POPULATE_WRITE)
	if err == unix.EINVAL {
		noPopulate.Store(true)
	}
}
