package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/svcdb/svcdb/core/resp"
)

// LoadInfo is what Load found and did, for the start-up log and INFO.
type LoadInfo struct {
	// Exists is false when there was no AOF to load: no manifest (or one
	// listing no base and no incremental file) and no old-style file.
	Exists bool
	// Upgraded: an old-style <data-dir>/<appendfilename> was moved into the
	// directory as its base, as Redis 7 does when it finds one.
	Upgraded bool
	Manifest *Manifest
	Files    int   // base and incremental files read (empty ones included)
	Commands int64 // commands handed to apply (MULTI and EXEC included)
	Size     int64 // bytes in the base and incremental files after loading: Redis' aof_current_size
	// Truncated: the last file ended inside a command (or inside a MULTI
	// block) and, aof-load-truncated being on, was cut to TruncatedAt bytes.
	// Redis logs "!!! Warning: short read while loading the AOF file
	// <TruncatedFile>!!!" and "AOF <file> loaded anyway because
	// aof-load-truncated is enabled".
	Truncated     bool
	TruncatedFile string
	TruncatedAt   int64
	// RevertedMulti: the last file ended inside MULTI ... without EXEC; the
	// block was not applied (Redis: "Revert incomplete MULTI/EXEC
	// transaction in AOF file <file>").
	RevertedMulti bool
}

// LoadError is a failed load, with Redis' message in Msg ("Bad file format
// reading the append only file appendonly.aof.1.incr.aof: make a backup of
// your AOF file, then use ./redis-check-aof --fix <filename.manifest>") and,
// unlike Redis' log, where it happened.
type LoadError struct {
	File   string // the file's name inside the AOF directory
	Offset int64  // byte offset in File of the command or line at fault; -1 when not about a position
	Msg    string // Redis' text
	Err    error  // the cause: a *ParseError, the callback's error, an I/O error; may be nil
}

func (e *LoadError) Error() string {
	s := e.Msg
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (file %s, offset %d", e.File, e.Offset)
		if e.Err != nil {
			s += ": " + e.Err.Error()
		}
		return s + ")"
	}
	if e.Err != nil && !strings.Contains(s, e.Err.Error()) {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *LoadError) Unwrap() error { return e.Err }

// Load reads the AOF in dir (<data-dir>/<appenddirname>) named by filename
// (appendfilename), as Redis 7.0's loadAppendOnlyFiles:
//
//   - A missing directory or manifest with an old-style
//     <data-dir>/<filename> present is upgraded first, as Redis does: the
//     directory is created, a manifest naming the old file as base seq 1 is
//     written, and the file is moved into the directory.
//   - The base file, when listed, goes to base(path, isRDB). An RDB (the
//     file starts with "REDIS") must be loaded by the callback; when it is
//     not the RDB-format base Redis 7 writes (*.rdb) but an old-style file
//     with an RDB preamble, the commands after the RDB's end (found by its
//     checksum) are replayed here. A base holding commands (isRDB false) is
//     replayed here too, after the callback, which can simply return nil.
//   - Every incremental file, in manifest order, is parsed with a
//     CommandReader and each command handed to apply (its arguments are only
//     valid during the call). A MULTI block is handed over, MULTI and EXEC
//     included, only once its EXEC has been read, so a block the file ends
//     inside is never applied.
//   - The last file may end inside a command or a MULTI block (a crash in
//     the middle of a write). With truncatedOK (aof-load-truncated yes) the
//     file is cut to the end of the last complete command and loading
//     succeeds (LoadInfo.Truncated); otherwise it is a *LoadError. A
//     truncated file that is not the last one, a malformed command, a
//     missing file and an error from a callback are *LoadErrors, and the
//     files are left untouched. History files are not read.
//
// apply's error text is followed by " reading the append only file <name>"
// (so errors.New("Unknown command 'foo'") reads as Redis' message).
func Load(dir, filename string, truncatedOK bool, base func(path string, isRDB bool) error, apply func(args [][]byte) error) (LoadInfo, error) {
	var info LoadInfo
	m, err := readManifest(dir, filename)
	if err != nil {
		return info, err
	}
	m, info.Upgraded, err = upgradeIfNeeded(dir, filename, m)
	if err != nil {
		return info, err
	}
	info.Manifest = m
	if m == nil || (m.Base == nil && len(m.Incr) == 0) {
		return info, nil
	}
	info.Exists = true

	var files []FileInfo
	if m.Base != nil {
		files = append(files, *m.Base)
	}
	files = append(files, m.Incr...)
	// As Redis' getBaseAndIncrAppendOnlyFilesSize: every listed file must
	// exist before anything is loaded.
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			return info, &LoadError{File: f.Name, Offset: -1, Err: err,
				Msg: fmt.Sprintf("Unable to obtain the AOF file %s length. stat: %s", f.Name, strerror(err))}
		}
		info.Size += st.Size()
	}
	if info.Size == 0 {
		return info, nil // Redis' AOF_EMPTY: nothing to load
	}

	l := loader{dir: dir, filename: filename, truncatedOK: truncatedOK, base: base, apply: apply, info: &info}
	for i, f := range files {
		if err := l.file(f, i == 0 && m.Base != nil, i == len(files)-1); err != nil {
			return info, err
		}
		info.Files++
	}
	return info, nil
}

// loader replays one AOF's files.
type loader struct {
	dir, filename string
	truncatedOK   bool
	base          func(path string, isRDB bool) error
	apply         func(args [][]byte) error
	info          *LoadInfo
}

// file loads one file, as Redis' loadSingleAppendOnlyFile.
func (l *loader) file(fi FileInfo, isBase, last bool) error {
	path := filepath.Join(l.dir, fi.Name)
	f, err := os.Open(path)
	if err != nil {
		return &LoadError{File: fi.Name, Offset: -1, Err: err,
			Msg: fmt.Sprintf("Fatal error: can't open the append log file %s for reading: %s", fi.Name, strerror(err))}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return l.readError(fi.Name, err)
	}
	size := st.Size()
	if size == 0 {
		return nil // AOF_EMPTY
	}
	var sig [5]byte
	n, err := io.ReadFull(f, sig[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return l.readError(fi.Name, err)
	}
	var start int64
	if n == 5 && string(sig[:]) == "REDIS" {
		oldStyle := fi.Name == l.filename
		if err := l.base(path, true); err != nil {
			msg := fmt.Sprintf("Error reading the RDB base file %s, AOF loading aborted", fi.Name)
			if oldStyle {
				msg = fmt.Sprintf("Error reading the RDB preamble of the AOF file %s, AOF loading aborted", fi.Name)
			}
			return &LoadError{File: fi.Name, Offset: -1, Msg: msg, Err: err}
		}
		if strings.HasSuffix(fi.Name, rdbFormat) {
			return nil // Redis 7 writes nothing after a *.rdb base's RDB
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return l.readError(fi.Name, err)
		}
		end, err := rdbEnd(f)
		if err != nil {
			return l.readError(fi.Name, err)
		}
		if end < 0 {
			return &LoadError{File: fi.Name, Offset: -1,
				Msg: fmt.Sprintf("Can't find the end of the RDB preamble of the AOF file %s (no checksummed EOF opcode): the commands after it cannot be read", fi.Name)}
		}
		start = end
	} else if isBase {
		if err := l.base(path, false); err != nil {
			return &LoadError{File: fi.Name, Offset: -1, Err: err,
				Msg: fmt.Sprintf("Error reading the base file %s, AOF loading aborted", fi.Name)}
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return l.readError(fi.Name, err)
	}
	return l.commands(fi.Name, path, io.NewSectionReader(f, start, size-start), start, size, last)
}

// commands replays the commands of r (the bytes of file name from offset
// base on, size bytes in all), handling MULTI blocks and a truncated tail.
func (l *loader) commands(name, path string, r io.Reader, base, size int64, last bool) error {
	rd := NewCommandReader(r, size-base)
	rd.off, rd.size = base, size // offsets in the whole file
	validUpTo := base
	var validBeforeMulti int64
	inMulti := false
	var queued [][][]byte // copies of a MULTI block's commands, MULTI first
	for {
		at := rd.Offset()
		args, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			if pe.Truncated {
				if inMulti { // as Redis: the unfinished transaction goes too
					l.info.RevertedMulti = true
					validUpTo = validBeforeMulti
				}
				return l.truncated(name, path, validUpTo, last, pe)
			}
			return &LoadError{File: name, Offset: pe.Offset, Err: pe,
				Msg: fmt.Sprintf("Bad file format reading the append only file %s: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>", name)}
		}
		if err != nil {
			return l.readError(name, err)
		}
		isMulti, isExec := resp.EqualFold(args[0], "multi"), resp.EqualFold(args[0], "exec")
		if isMulti {
			validBeforeMulti = validUpTo
		}
		switch {
		case inMulti && !isExec:
			queued = append(queued, cloneArgs(args))
		case isMulti:
			inMulti = true
			queued = append(queued[:0], cloneArgs(args))
		case isExec && inMulti:
			for _, q := range queued {
				if err := l.applyOne(name, at, q); err != nil {
					return err
				}
			}
			inMulti, queued = false, queued[:0]
			if err := l.applyOne(name, at, args); err != nil {
				return err
			}
		default:
			if err := l.applyOne(name, at, args); err != nil {
				return err
			}
		}
		validUpTo = rd.Offset()
	}
	if inMulti {
		l.info.RevertedMulti = true
		return l.truncated(name, path, validBeforeMulti, last,
			&ParseError{Offset: size, Truncated: true, Reason: "the file ends inside MULTI without EXEC"})
	}
	return nil
}

func (l *loader) applyOne(name string, at int64, args [][]byte) error {
	if err := l.apply(args); err != nil {
		return &LoadError{File: name, Offset: at, Err: err,
			Msg: fmt.Sprintf("%s reading the append only file %s", err, name)}
	}
	l.info.Commands++
	return nil
}

// truncated handles a file that ends inside a command: Redis' uxeof.
func (l *loader) truncated(name, path string, validUpTo int64, last bool, pe *ParseError) error {
	if !l.truncatedOK {
		return &LoadError{File: name, Offset: pe.Offset, Err: pe,
			Msg: fmt.Sprintf("Unexpected end of file reading the append only file %s. You can: "+
				"1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
				"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", name)}
	}
	if !last {
		return &LoadError{File: name, Offset: pe.Offset, Err: pe,
			Msg: "Fatal error: the truncated file is not the last file"}
	}
	st, err := os.Stat(path)
	if err != nil {
		return l.readError(name, err)
	}
	if err := os.Truncate(path, validUpTo); err != nil {
		return &LoadError{File: name, Offset: validUpTo, Err: err,
			Msg: fmt.Sprintf("Error truncating the AOF file %s: %s", name, strerror(err))}
	}
	l.info.Size -= st.Size() - validUpTo
	l.info.Truncated, l.info.TruncatedFile, l.info.TruncatedAt = true, name, validUpTo
	return nil
}

func (l *loader) readError(name string, err error) error {
	return &LoadError{File: name, Offset: -1, Err: err,
		Msg: fmt.Sprintf("Unrecoverable error reading the append only file %s: %s", name, strerror(err))}
}

// upgradeIfNeeded moves an old-style single AOF (<data-dir>/<filename>)
// into dir as its base, as Redis' loadAppendOnlyFiles and aofUpgradePrepare
// do, when dir does not exist, when its manifest lists no file, or when the
// manifest lists only that base and the file is not in dir yet (an upgrade
// interrupted by a crash). It returns the manifest to use.
func upgradeIfNeeded(dir, filename string, m *Manifest) (*Manifest, bool, error) {
	old := filepath.Join(filepath.Dir(dir), filename)
	if !fileExists(old) {
		return m, false, nil
	}
	dirMissing := !dirExists(dir)
	empty := m == nil || (m.Base == nil && len(m.Incr) == 0)
	interrupted := m != nil && m.Base != nil && len(m.Incr) == 0 && m.Base.Name == filename &&
		!fileExists(filepath.Join(dir, filename))
	if !dirMissing && !empty && !interrupted {
		return m, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("Can't open or create append-only dir %s: %s", dir, strerror(err))
	}
	nm := &Manifest{}
	if m != nil {
		nm = m.clone()
	}
	nm.Base = &FileInfo{Name: filename, Seq: 1, Type: TypeBase}
	nm.BaseSeq = 1
	if err := writeManifest(dir, filename, nm); err != nil {
		return nil, false, err
	}
	if err := os.Rename(old, filepath.Join(dir, filename)); err != nil {
		return nil, false, fmt.Errorf("Error trying to move the old AOF file %s into dir %s: %s", filename, dir, strerror(err))
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, false, fmt.Errorf("Fail to fsync directory %s: %s", filepath.Dir(dir), strerror(err))
	}
	return nm, true, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func cloneArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		at := len(buf)
		buf = append(buf, a...)
		out[i] = buf[at:len(buf):len(buf)]
	}
	return out
}
