package rdb

import (
	"encoding/binary"
	"io"
)

// Writer writes an RDB file: header and aux fields, databases, EOF and the
// CRC64 (Jones, as Redis' crc64) over everything before it. It keeps a
// running checksum of every byte it passed on and the count of them; it
// does not buffer, so give it a buffered io.Writer. After the first error
// every call returns that error.
type Writer struct {
	w       io.Writer
	crc     uint64
	written int64
	err     error
	scratch []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, scratch: make([]byte, 0, 64)}
}

// Header writes "REDIS0010" and one AUX field per pair (Redis writes
// redis-ver, redis-bits, ctime, used-mem, aof-base).
func (w *Writer) Header(aux ...[2]string) error {
	b := append(w.scratch[:0], "REDIS0010"...)
	for _, kv := range aux {
		b = append(b, opAux)
		b = AppendString(b, []byte(kv[0]))
		b = AppendString(b, []byte(kv[1]))
	}
	w.scratch = b[:0]
	_, err := w.Write(b)
	return err
}

// SelectDB writes SELECTDB db and RESIZEDB keys expires.
func (w *Writer) SelectDB(db int, keys, expires uint64) error {
	b := append(w.scratch[:0], opSelectDB)
	b = AppendLen(b, uint64(db))
	b = append(b, opResizeDB)
	b = AppendLen(b, keys)
	b = AppendLen(b, expires)
	w.scratch = b[:0]
	_, err := w.Write(b)
	return err
}

// Write writes already-encoded entries (from AppendKey ...).
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.crc = crc64Update(w.crc, p[:n])
	w.written += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	w.err = err
	return n, err
}

// End writes the EOF opcode and the checksum.
func (w *Writer) End() error {
	if _, err := w.Write([]byte{opEOF}); err != nil {
		return err
	}
	sum := binary.LittleEndian.AppendUint64(w.scratch[:0], w.crc)
	_, err := w.Write(sum)
	return err
}

// Written is the number of bytes written so far.
func (w *Writer) Written() int64 { return w.written }

// AppendFunction appends a function library record (Redis 7.0's
// RDB_OPCODE_FUNCTION2 and the library's code as a string), as
// rdbSaveFunctions writes it in an RDB file and in a FUNCTION DUMP payload.
func AppendFunction(dst, code []byte) []byte {
	dst = append(dst, opFunction2)
	return AppendString(dst, code)
}
