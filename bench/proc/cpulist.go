package proc

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// ParseCPUList parses a taskset/cpuset style list such as "0", "1-3" or "0,2-3".
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("CPU list %q: empty element", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: bad CPU %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// CanPin reports whether pinning servers and clients to separate CPUs makes
// sense here: taskset is installed and the process may use at least two CPUs.
// If not, why says what is missing.
func CanPin() (ok bool, why string) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return false, "taskset not installed (util-linux)"
	}
	n, err := UsableCPUs()
	if err != nil {
		return false, "cannot read CPU affinity: " + err.Error()
	}
	if n < 2 {
		return false, fmt.Sprintf("only %d usable CPU", n)
	}
	return true, ""
}
