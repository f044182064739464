package logging

import (
	"math"
	"os"
	"sync"
	"time"

	"github.com/DeRuina/timberjack"
)

// unlimitedMB stands for "no size limit": timberjack reads MaxSize 0 as its
// 100 MB default and has no way to turn size rotation off.
const unlimitedMB = math.MaxInt32

// fileSink writes to a timberjack.Logger, which rotates by size and prunes
// backups, and rotates it by time itself (see the package doc for why).
type fileSink struct {
	tj        *timberjack.Logger
	frequency string // daily, hourly or never
	now       func() time.Time

	mu   sync.Mutex // guards next; held while checking and rotating only
	next time.Time  // first instant of the next period; zero: no time rotation
}

func newFileSink(o Options) *fileSink {
	maxMB := o.MaxSizeMB
	if maxMB == 0 {
		maxMB = unlimitedMB
	}
	f := &fileSink{
		tj: &timberjack.Logger{
			Filename:   o.FilePath,
			MaxSize:    maxMB,
			MaxBackups: o.MaxFiles,
			LocalTime:  true,
			// RotateAt / RotateAtMinutes stay empty: time rotation is ours.
		},
		frequency: o.Frequency,
		now:       o.Now,
	}
	if f.frequency != "never" {
		// A file from an earlier run belongs to the period of its last write;
		// if that period is over, the first write rotates it.
		since := f.now()
		if fi, err := os.Stat(o.FilePath); err == nil && fi.Size() > 0 {
			since = fi.ModTime().In(since.Location())
		}
		f.next = nextBoundary(since, f.frequency)
	}
	return f
}

// nextBoundary returns the start of the period after the one holding t:
// the next midnight (daily) or the next full hour (hourly) in t's location.
// time.Date normalises day and hour overflow, DST included.
func nextBoundary(t time.Time, frequency string) time.Time {
	y, m, d := t.Date()
	switch frequency {
	case "daily":
		return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
	case "hourly":
		return time.Date(y, m, d, t.Hour()+1, 0, 0, 0, t.Location())
	}
	return time.Time{}
}

// Write rotates first when a period boundary has passed since the last
// rotation, so the line lands in the new period's file.
func (f *fileSink) Write(p []byte) (int, error) {
	if f.frequency != "never" {
		f.mu.Lock()
		if now := f.now(); !now.Before(f.next) {
			f.next = nextBoundary(now, f.frequency)
			f.mu.Unlock()
			// A failed rotation leaves the current file in use; the line
			// is still written below.
			_ = f.tj.RotateWithReason("time")
		} else {
			f.mu.Unlock()
		}
	}
	return f.tj.Write(p)
}

func (f *fileSink) Close() error { return f.tj.Close() }
