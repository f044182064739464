//go:build !linux

package aof

import "syscall"

// fdatasync falls back to fsync where the system has no fdatasync.
func fdatasync(fd int) error { return syscall.Fsync(fd) }
