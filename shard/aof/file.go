package aof

import (
	"errors"
	"os"
	"syscall"
)

// File is an open incremental file as the Log writes it. Tests inject their
// own (failing writes, short writes, failing fsyncs, a Sync counter) with
// WithOpener.
//
// Write appends at the end of the file (O_APPEND semantics, also after a
// Truncate) and, as io.Writer, returns a non-nil error when it writes fewer
// than len(p) bytes. Sync makes everything written so far durable; it may
// run while another goroutine is in Write (as Redis' background fsync).
// Truncate cuts the file to size bytes, to take back a short write.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Opener opens the file at path for appending, creating it when missing,
// and returns it with its current size.
type Opener func(path string) (File, int64, error)

// OpenAppend is the default Opener: the file opened O_WRONLY|O_APPEND|O_CREAT
// with mode 0644, as Redis opens its incremental file, and Sync done with
// fdatasync where the system has it (Redis' redis_fsync).
func OpenAppend(path string) (File, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return dataSyncFile{f}, st.Size(), nil
}

// dataSyncFile is an *os.File whose Sync is fdatasync.
type dataSyncFile struct{ *os.File }

func (f dataSyncFile) Sync() error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = fdatasync(int(fd)) }); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// strerror is the text C's strerror gives for err's errno ("No space left
// on device"), which is what Redis prints and puts in -MISCONF replies; Go
// spells the same texts in lower case. Errors without an errno keep their
// own text.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}
