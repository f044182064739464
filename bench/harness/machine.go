package harness

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// Machine describes where a comparison ran.
type Machine struct {
	CPUModel   string `json:"cpu_model"`
	OnlineCPUs int    `json:"online_cpus"`
	// UsableCPUs is what this process's affinity allows (cgroups, taskset).
	UsableCPUs int    `json:"usable_cpus"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"` // svcbench's toolchain
	// SvcDBGoVersion is the toolchain that built the svcdb binary, if it is
	// a Go binary.
	SvcDBGoVersion        string `json:"svcdb_go_version,omitempty"`
	RedisVersion          string `json:"redis_version,omitempty"`
	RedisBenchmarkVersion string `json:"redis_benchmark_version,omitempty"`
}

func describeMachine(ctx context.Context, cfg *Config) Machine {
	m := Machine{GoVersion: runtime.Version(), OnlineCPUs: runtime.NumCPU()}
	m.CPUModel, m.OnlineCPUs = cpuInfo(m.OnlineCPUs)
	m.UsableCPUs, _ = proc.UsableCPUs()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = runtime.GOOS + " " + strings.TrimSpace(string(b))
	} else {
		m.Kernel = runtime.GOOS
	}
	if bi, err := buildinfo.ReadFile(cfg.SvcDB.Path); err == nil {
		m.SvcDBGoVersion = bi.GoVersion
	}
	if cfg.Redis.Path != "" { // the diagnostics comparison runs no redis-server
		m.RedisVersion = toolVersion(ctx, cfg.Redis.Path)
	}
	if cfg.hasRuns() || cfg.hasSuite() {
		m.RedisBenchmarkVersion = toolVersion(ctx, cfg.RedisBenchmark)
	}
	return m
}

// cpuInfo returns the first "model name" in /proc/cpuinfo and the number of
// processors listed, or fallback if the file cannot be read.
func cpuInfo(fallback int) (model string, n int) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown", fallback
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model": // x86, arm64
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "processor":
			n++
		}
	}
	if model == "" {
		model = "unknown"
	}
	if n == 0 {
		n = fallback
	}
	return model, n
}

// toolVersion runs "path --version" and returns the "v=x.y.z" part of a
// Redis tool's answer, or the whole first line.
func toolVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v
		}
	}
	return strings.TrimSpace(line)
}
