package aof

import "syscall"

// fdatasync is what Redis' redis_fsync is on Linux: it flushes the data and
// the metadata needed to read it back (the size), not the timestamps.
func fdatasync(fd int) error {
	for {
		err := syscall.Fdatasync(fd)
		if err != syscall.EINTR {
			return err
		}
	}
}
