package logging

import (
	"bytes"
	"sync"
)

// ring keeps the last len(lines) formatted lines for diagnostic bundles. It
// is an io.Writer: each Write is one record (see fanout).
type ring struct {
	mu    sync.Mutex
	lines []string // fixed length; lines[next] is the oldest once full
	next  int
	full  bool
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

// Write stores p, without its trailing newline, as one line. The string copy
// is the only allocation; it is needed because the handler reuses p.
func (r *ring) Write(p []byte) (int, error) {
	line := string(bytes.TrimSuffix(p, []byte("\n")))
	r.mu.Lock()
	r.lines[r.next] = line
	r.next++
	if r.next == len(r.lines) {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
	return len(p), nil
}

// recent returns up to n of the newest lines, oldest first; n <= 0 means all.
func (r *ring) recent(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	have := r.next
	if r.full {
		have = len(r.lines)
	}
	if n <= 0 || n > have {
		n = have
	}
	out := make([]string, n)
	start := r.next - n // index of the oldest line wanted, modulo len
	if start < 0 {
		start += len(r.lines)
	}
	for i := range out {
		out[i] = r.lines[(start+i)%len(r.lines)]
	}
	return out
}
