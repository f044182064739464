package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ReadRSS returns pid's resident set size in bytes: VmRSS from
// /proc/<pid>/status (what the kernel charges the process, shared pages
// included; the same figure Redis reports as used_memory_rss).
func ReadRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

// parseVmRSS finds "VmRSS:   1234 kB" in a /proc/<pid>/status text.
func parseVmRSS(b []byte) (int64, error) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("status: VmRSS line %q: want \"N kB\"", line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status: VmRSS: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("status: no VmRSS line (a kernel thread, or a zombie?)")
}
