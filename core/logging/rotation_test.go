package logging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is Options.Now for the time-rotation tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// set moves the clock. It also sleeps 2 ms of real time: timberjack names
// backups after the real clock with millisecond resolution and counts
// MaxBackups in distinct names, so two rotations in one millisecond would
// count as one.
func (c *fakeClock) set(t time.Time) {
	time.Sleep(2 * time.Millisecond)
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// backups returns the rotated files of dir/app.log for a reason (size or
// time), sorted by name, which is by rotation time.
func backups(t *testing.T, dir, reason string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "app-*-"+reason+"*.log"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// waitBackups waits for timberjack's background pruning to leave want files.
func waitBackups(t *testing.T, dir, reason string, want int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b := backups(t, dir, reason)
		if len(b) == want || time.Now().After(deadline) {
			if len(b) != want {
				t.Fatalf("%d %s backups %v; want %d", len(b), reason, b, want)
			}
			return b
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRotationBySize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	l, err := New(Options{Format: "json", Output: "none", FilePath: path, MaxSizeMB: 1, MaxFiles: 2, Frequency: "never"})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 1000)
	const lines = 4500 // ~4.9 MB: four size rotations
	for i := range lines {
		l.Info("filler", "i", i, "pad", pad)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b := waitBackups(t, dir, "size", 2) // four rotations, MaxFiles 2 kept
	for _, f := range append(b, path) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes; want <= 1 MiB", f, fi.Size())
		}
	}
	for _, f := range b {
		if fi, _ := os.Stat(f); fi.Size() < 1<<20-2000 {
			t.Errorf("backup %s is %d bytes; want close to 1 MiB", f, fi.Size())
		}
	}
	// The newest lines are in the current file, the ones just before in the
	// newest backup, and each line is whole.
	cur := readFile(t, path)
	if !strings.Contains(cur, `"i":4499,`) {
		t.Error("the last line is not in the current file")
	}
	prev := readFile(t, b[len(b)-1])
	if !strings.HasSuffix(prev, "}\n") {
		t.Error("a backup ends in the middle of a line")
	}
	// No line lost or split between the newest backup and the current file.
	var idx []int
	for _, line := range strings.Split(strings.TrimSpace(prev+cur), "\n") {
		var rec struct{ I int }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		idx = append(idx, rec.I)
	}
	for k := 1; k < len(idx); k++ {
		if idx[k] != idx[k-1]+1 {
			t.Fatalf("line %d follows line %d", idx[k], idx[k-1])
		}
	}
	if idx[len(idx)-1] != lines-1 || len(idx) < 1000 {
		t.Errorf("newest backup and current file hold lines %d..%d", idx[0], idx[len(idx)-1])
	}
}

func TestRotationDailyWithClock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clock := &fakeClock{t: time.Date(2026, 11, 22, 23, 59, 58, 0, time.UTC)}
	l, err := New(Options{Format: "json", Output: "none", FilePath: path, MaxSizeMB: 100, MaxFiles: 5, Frequency: "daily", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Info("day1-a")
	clock.set(time.Date(2026, 11, 22, 23, 59, 59, 999999999, time.UTC))
	l.Info("day1-b")
	if b := backups(t, dir, "time"); len(b) != 0 {
		t.Fatalf("rotated before midnight: %v", b)
	}
	clock.set(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	l.Info("day2-a")
	clock.set(time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC))
	l.Info("day2-b")
	b := backups(t, dir, "time")
	if len(b) != 1 {
		t.Fatalf("after midnight: backups %v; want 1", b)
	}
	if got := strings.Join(messages(t, readFile(t, b[0])), ","); got != "day1-a,day1-b" {
		t.Errorf("first day's file holds %s", got)
	}
	if got := strings.Join(messages(t, readFile(t, path)), ","); got != "day2-a,day2-b" {
		t.Errorf("current file holds %s", got)
	}
	// Two idle days: one rotation, on the next write, not one per midnight.
	clock.set(time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC))
	l.Info("day5")
	b = backups(t, dir, "time")
	if len(b) != 2 {
		t.Fatalf("after idle days: backups %v; want 2", b)
	}
	if got := strings.Join(messages(t, readFile(t, b[1])), ","); got != "day2-a,day2-b" {
		t.Errorf("second day's file holds %s", got)
	}
	if got := strings.Join(messages(t, readFile(t, path)), ","); got != "day5" {
		t.Errorf("current file holds %s", got)
	}
}

func TestRotationHourlyWithClockKeepsMaxFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clock := &fakeClock{t: time.Date(2026, 11, 22, 10, 59, 59, 0, time.UTC)}
	l, err := New(Options{Format: "json", Output: "none", FilePath: path, MaxSizeMB: 100, MaxFiles: 1, Frequency: "hourly", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	l.Info("h10")
	clock.set(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	l.Info("h11-a")
	clock.set(time.Date(2026, 11, 22, 11, 59, 0, 0, time.UTC))
	l.Info("h11-b")
	clock.set(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	l.Info("h12")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b := waitBackups(t, dir, "time", 1) // two rotations, MaxFiles 1 kept
	if got := strings.Join(messages(t, readFile(t, b[0])), ","); got != "h11-a,h11-b" {
		t.Errorf("kept backup holds %s; want the newest hour", got)
	}
	if got := strings.Join(messages(t, readFile(t, path)), ","); got != "h12" {
		t.Errorf("current file holds %s", got)
	}
}

func TestRotationNeverIgnoresClock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clock := &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	l, err := New(Options{Format: "json", Output: "none", FilePath: path, MaxSizeMB: 1, Frequency: "never", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Info("a")
	clock.set(clock.Now().Add(72 * time.Hour))
	l.Info("b")
	if b, _ := filepath.Glob(filepath.Join(dir, "app-*")); len(b) != 0 {
		t.Errorf("frequency never rotated: %v", b)
	}
}

// A file left by an earlier run in an earlier period is rotated on the first
// write, so the new period's file starts clean.
func TestRotationOfStaleFileFromEarlierRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	if err := os.WriteFile(path, []byte(`{"msg":"old-run"}`+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, now.Add(-48*time.Hour), now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: now}
	l, err := New(Options{Format: "json", Output: "none", FilePath: path, MaxSizeMB: 100, Frequency: "daily", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Info("new-run")
	b := backups(t, dir, "time")
	if len(b) != 1 || !strings.Contains(readFile(t, b[0]), "old-run") {
		t.Fatalf("stale file not rotated: %v", b)
	}
	if got := strings.Join(messages(t, readFile(t, path)), ","); got != "new-run" {
		t.Errorf("current file holds %s", got)
	}
	// A recent file is appended to instead.
	dir2 := t.TempDir()
	path2 := filepath.Join(dir2, "app.log")
	if err := os.WriteFile(path2, []byte(`{"msg":"same-day"}`+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path2, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	l2, err := New(Options{Format: "json", Output: "none", FilePath: path2, MaxSizeMB: 100, Frequency: "daily", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	l2.Info("appended")
	if got := strings.Join(messages(t, readFile(t, path2)), ","); got != "same-day,appended" {
		t.Errorf("recent file holds %s", got)
	}
}

// The mapping onto timberjack's fields, including the cases a real rotation
// test cannot show: MaxSizeMB 0 is "no limit" (not timberjack's 100 MB
// default) and timberjack's own scheduler stays off.
func TestTimberjackMapping(t *testing.T) {
	for _, tc := range []struct {
		o        Options
		wantSize int
	}{
		{Options{FilePath: "a.log", MaxSizeMB: 7, MaxFiles: 3, Frequency: "hourly"}, 7},
		{Options{FilePath: "a.log", MaxSizeMB: 0, MaxFiles: 0, Frequency: "daily"}, unlimitedMB},
	} {
		o, err := tc.o.normalized()
		if err != nil {
			t.Fatal(err)
		}
		f := newFileSink(o)
		tj := f.tj
		if tj.Filename != "a.log" || tj.MaxSize != tc.wantSize || tj.MaxBackups != tc.o.MaxFiles || !tj.LocalTime ||
			len(tj.RotateAt) != 0 || len(tj.RotateAtMinutes) != 0 || tj.RotationInterval != 0 || tj.MaxAge != 0 {
			t.Errorf("%+v mapped to %+v", tc.o, tj)
		}
		if f.frequency != tc.o.Frequency {
			t.Errorf("frequency %q; want %q", f.frequency, tc.o.Frequency)
		}
	}
	// Boundaries: local midnight and the next full hour, across month end
	// and in a zone with a half-hour offset.
	ist := time.FixedZone("IST", 5*3600+1800)
	for _, tc := range []struct {
		t         time.Time
		frequency string
		want      time.Time
	}{
		{time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC), "daily", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), "daily", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC), "hourly", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 11, 22, 10, 45, 0, 0, ist), "hourly", time.Date(2026, 11, 22, 11, 0, 0, 0, ist)},
		{time.Date(2026, 11, 22, 10, 45, 0, 0, ist), "daily", time.Date(2026, 11, 23, 0, 0, 0, 0, ist)},
	} {
		if got := nextBoundary(tc.t, tc.frequency); !got.Equal(tc.want) {
			t.Errorf("nextBoundary(%v, %s) = %v; want %v", tc.t, tc.frequency, got, tc.want)
		}
	}
}
