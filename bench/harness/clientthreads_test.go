package harness

import (
	"runtime"
	"testing"
)

// TestClientThreads: a load runs on memtier's -t threads, and the runtime
// gets its default back afterwards.
func TestClientThreads(t *testing.T) {
	def := runtime.GOMAXPROCS(0)
	restore := clientThreads(1)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("during a -t 1 load GOMAXPROCS = %d, want 1", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Errorf("after the load GOMAXPROCS = %d, want the default %d", got, def)
	}
	restore = clientThreads(3)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("during a -t 3 load GOMAXPROCS = %d, want 3", got)
	}
	restore()
}
