//go:build unix && !linux

package proc

import (
	"errors"
	"runtime"
)

var errNoAffinity = errors.New("CPU affinity is only implemented on Linux")

// UsableCPUs falls back to runtime.NumCPU.
func UsableCPUs() (int, error) { return runtime.NumCPU(), nil }

// PinSelf is not implemented outside Linux.
func PinSelf(cpus []int) (func() error, error) { return nil, errNoAffinity }
