// Package procmem reads the process' own memory figures from the kernel:
// its resident set size, the number Redis reports as used_memory_rss and
// the one memory alerts and the OOM killer care about. It is not the Go
// runtime's view (runtime/metrics: what the runtime has mapped, which
// counts address space never touched or already returned); both are
// reported, each under its own name.
//
// It imports nothing of ours, and must never be on the per-command path:
// each call reads a /proc file (a few microseconds).
package procmem

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// statmPath is read by Resident; a variable for this package's tests.
var statmPath = "/proc/self/statm"

// Resident returns the process' resident set size in bytes: the second
// field of /proc/self/statm (resident pages, shared ones included, as
// VmRSS in /proc/self/status and Redis' zmalloc_get_rss) times the page
// size. Without /proc (not Linux) it returns an error.
func Resident() (int64, error) {
	b, err := os.ReadFile(statmPath)
	if err != nil {
		return 0, err
	}
	return parseStatm(b, int64(os.Getpagesize()))
}

// parseStatm reads "size resident shared text lib data dt" (in pages).
func parseStatm(b []byte, pageSize int64) (int64, error) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, errors.New("procmem: statm: want at least 2 fields, got " + strconv.Quote(string(b)))
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || pages < 0 {
		return 0, errors.New("procmem: statm: resident pages " + strconv.Quote(string(f[1])))
	}
	return pages * pageSize, nil
}
