package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// clockTick is the unit of utime/stime in /proc/<pid>/stat: sysconf(CLK_TCK),
// which is USER_HZ = 100 on every Linux architecture Go supports. The Go
// standard library has no sysconf; hard-coding beats a cgo dependency.
const clockTick = 10 * time.Millisecond

// CPUSample is one reading of a process's CPU time.
type CPUSample struct {
	// Sched is the sum of the first field of /proc/<pid>/task/*/schedstat
	// (nanoseconds on CPU) over the live threads; zero if unavailable
	// (kernels without CONFIG_SCHEDSTATS expose no schedstat).
	Sched time.Duration
	// Ticks is utime+stime (fields 14 and 15 of /proc/<pid>/stat) in clock
	// ticks converted to a duration: coarse (10 ms) but it includes threads
	// that have already exited.
	Ticks time.Duration
}

// Total is the best estimate of the CPU time used so far: the precise
// schedstat sum, unless the tick count is ahead of it by more than a tick,
// which means threads have exited and taken their schedstat with them.
// (/proc/<pid>/schedstat alone would be only the main thread: a Go server
// does its work on other threads, hence the per-task sum.)
func (s CPUSample) Total() time.Duration {
	if s.Sched == 0 || s.Ticks > s.Sched+clockTick {
		return s.Ticks
	}
	return s.Sched
}

// Sub returns the CPU time used between an earlier sample and s.
func (s CPUSample) Sub(earlier CPUSample) time.Duration { return s.Total() - earlier.Total() }

// ReadCPU reads pid's CPU time from /proc.
func ReadCPU(pid int) (CPUSample, error) {
	var s CPUSample
	ticks, err := statTicks(pid)
	if err != nil {
		return s, err
	}
	s.Ticks = time.Duration(ticks) * clockTick
	s.Sched = schedSum(pid)
	return s, nil
}

// statTicks returns utime+stime from /proc/<pid>/stat.
func statTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatTicks(b)
}

// parseStatTicks extracts fields 14 (utime) and 15 (stime). Field 2 (comm) is
// in parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseStatTicks(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no ')' in %q", b)
	}
	// After ')' come fields 3.. ; utime is field 14, i.e. index 11 here.
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after comm; want >= 13", len(f))
	}
	ut, err := strconv.ParseUint(string(f[11]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat utime: %w", err)
	}
	st, err := strconv.ParseUint(string(f[12]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat stime: %w", err)
	}
	return ut + st, nil
}

// schedSum sums the first schedstat field over pid's live threads, or returns
// 0 if schedstat is unavailable.
func schedSum(pid int) time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0
	}
	var sum uint64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // thread exited between Glob and ReadFile; Total() copes
		}
		f := bytes.Fields(b)
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		sum += ns
	}
	return time.Duration(sum)
}

// CPUTimes is the time CPUs spent busy, from /proc/stat, in clock ticks
// converted to durations.
type CPUTimes struct {
	// Busy is user + nice + system: task time. irq and softirq time is
	// left out: with IRQ time accounting (the usual configuration) it is
	// charged to no task, so it cannot be told apart per process.
	Busy time.Duration
	// Steal is time the hypervisor gave the virtual CPU to someone else.
	Steal time.Duration
}

// Sub returns the CPU time between an earlier reading and t.
func (t CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	return CPUTimes{Busy: t.Busy - earlier.Busy, Steal: t.Steal - earlier.Steal}
}

// ReadCPUTimes reads /proc/stat and returns the sum over cpus (CPU numbers;
// empty means every CPU). Coarse (10 ms ticks), but it sees every process
// on those CPUs, ours or not, and the hypervisor's steal.
func ReadCPUTimes(cpus []int) (CPUTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, err
	}
	return parseProcStat(b, cpus)
}

// parseProcStat sums the "cpuN user nice system idle iowait irq softirq
// steal ..." lines of cpus, or uses the "cpu" total line if cpus is empty.
func parseProcStat(b []byte, cpus []int) (CPUTimes, error) {
	want := map[string]bool{}
	for _, c := range cpus {
		want["cpu"+strconv.Itoa(c)] = true
	}
	if len(cpus) == 0 {
		want["cpu"] = true
	}
	var t CPUTimes
	found := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 0 || !want[string(f[0])] {
			continue
		}
		if len(f) < 9 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: %q: want 8 or more fields", line)
		}
		var v [8]uint64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseUint(string(f[i+1]), 10, 64); err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: %q: %w", line, err)
			}
		}
		t.Busy += time.Duration(v[0]+v[1]+v[2]) * clockTick
		t.Steal += time.Duration(v[7]) * clockTick
		found++
	}
	if found != len(want) {
		return CPUTimes{}, fmt.Errorf("/proc/stat: found %d of the %d CPU lines wanted (%v)", found, len(want), cpus)
	}
	return t, nil
}
