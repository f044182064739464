package proc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// cpuMask is a fixed 1024-CPU mask, the size glibc's cpu_set_t uses.
type cpuMask [1024 / 64]uint64

// UsableCPUs returns how many CPUs the calling thread may run on (its
// affinity mask), which is what a pinned or cgroup-limited process really
// gets; runtime.NumCPU is the same number taken at startup.
func UsableCPUs() (int, error) {
	var m cpuMask
	if err := schedGetaffinity(0, &m); err != nil {
		return 0, err
	}
	n := 0
	for _, w := range m {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n, nil
}

// PinSelf restricts every thread of the calling process to cpus (the Go
// runtime's threads included: threads created later inherit the mask of the
// thread that creates them) and returns a function restoring the previous
// mask. The in-process load generator uses it to stay off the servers' CPU.
func PinSelf(cpus []int) (restore func() error, err error) {
	if len(cpus) == 0 {
		return nil, fmt.Errorf("PinSelf: empty CPU list")
	}
	var old, m cpuMask
	if err := schedGetaffinity(0, &old); err != nil {
		return nil, err
	}
	for _, c := range cpus {
		if c < 0 || c >= len(m)*64 {
			return nil, fmt.Errorf("PinSelf: CPU %d out of range", c)
		}
		m[c/64] |= 1 << (c % 64)
	}
	if err := setAllThreads(&m); err != nil {
		_ = setAllThreads(&old)
		return nil, err
	}
	return func() error { return setAllThreads(&old) }, nil
}

// setAllThreads applies m to every thread in /proc/self/task. It makes two
// passes so that a thread created during the first pass by a not yet pinned
// thread is caught by the second.
func setAllThreads(m *cpuMask) error {
	for pass := 0; pass < 2; pass++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := schedSetaffinity(tid, m); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("sched_setaffinity(%d): %w", tid, err)
			}
		}
	}
	return nil
}

func schedGetaffinity(tid int, m *cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if e != 0 {
		return e
	}
	return nil
}

func schedSetaffinity(tid int, m *cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if e != 0 {
		return e
	}
	return nil
}
