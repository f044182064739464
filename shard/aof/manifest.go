package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/svcdb/svcdb/core/resp"
)

// File naming, as src/aof.c: <appendfilename>.<seq>.base.rdb (or .base.aof),
// <appendfilename>.<seq>.incr.aof and <appendfilename>.manifest, written
// through temp-<appendfilename>.manifest.
const (
	baseSuffix     = ".base"
	incrSuffix     = ".incr"
	rdbFormat      = ".rdb"
	aofFormat      = ".aof"
	manifestSuffix = ".manifest"
	tempPrefix     = "temp-"
)

// DefaultFilename is appendfilename's default.
const DefaultFilename = "appendonly.aof"

// FileType is the type letter of a manifest entry.
type FileType byte

const (
	TypeBase    FileType = 'b' // the snapshot the incremental files continue
	TypeHistory FileType = 'h' // superseded by a rewrite, to be deleted
	TypeIncr    FileType = 'i' // commands, replayed in sequence order
)

// FileInfo is one manifest line: "file <name> seq <seq> type <type>".
type FileInfo struct {
	Name string
	Seq  int64
	Type FileType
}

// Manifest is the list of files an AOF directory consists of, as Redis'
// aofManifest.
//
// Invariants (kept by ParseManifest and the Log): Base, when not nil, has
// Type TypeBase; every History entry has TypeHistory; Incr entries have
// TypeIncr and strictly increasing Seq; BaseSeq is the sequence number of
// the last base ever named (0 before the first) and IncrSeq that of the last
// incremental file (0 when there is none), so the next ones are +1.
type Manifest struct {
	Base    *FileInfo
	History []FileInfo
	Incr    []FileInfo
	BaseSeq int64
	IncrSeq int64
}

// clone returns a deep copy, changed and persisted before it replaces the
// original (as Redis' aofManifestDup), so a failed update leaves the
// original untouched.
func (m *Manifest) clone() *Manifest {
	c := &Manifest{BaseSeq: m.BaseSeq, IncrSeq: m.IncrSeq}
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.History = append([]FileInfo(nil), m.History...)
	c.Incr = append([]FileInfo(nil), m.Incr...)
	return c
}

// manifestMaxLine is Redis' MANIFEST_MAX_LINE: longer lines are an error.
const manifestMaxLine = 1024

// ManifestError is a manifest Redis would refuse, with Redis' message
// (src/aof.c aofLoadManifestFromFile) in Msg.
type ManifestError struct {
	Path string // the manifest file
	Line int    // 1-based line number; 0 when the error is not about a line
	Text string // the offending line, trimmed as Redis prints it
	Msg  string // Redis' text, e.g. "Invalid AOF manifest file format"
}

func (e *ManifestError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s (AOF manifest %s)", e.Msg, e.Path)
	}
	return fmt.Sprintf("%s (AOF manifest %s, at line %d: '%s')", e.Msg, e.Path, e.Line, e.Text)
}

// ParseManifest parses a manifest's content exactly as Redis 7.0's
// aofLoadManifestFromFile does: lines are read as fgets does with a 1025-byte
// buffer, '#' lines are comments, each line is split with sdssplitargs and
// must hold at least six words in key/value pairs; the keys file, seq and
// type are matched case-insensitively and unknown keys are ignored (Redis'
// forward compatibility); the name must not be a path; the type must be b,
// h or i; at most one base; incremental sequence numbers must increase. path
// is only used in errors.
func ParseManifest(path string, data []byte) (*Manifest, error) {
	m := &Manifest{}
	var maxSeq int64
	lineNum := 0
	for len(data) > 0 {
		// fgets: up to manifestMaxLine bytes, through the first '\n'.
		n := min(len(data), manifestMaxLine)
		if i := bytes.IndexByte(data[:n], '\n'); i >= 0 {
			n = i + 1
		}
		raw := data[:n]
		data = data[n:]
		lineNum++
		if raw[0] == '#' {
			continue
		}
		// The buffer is a C string from here on: it ends at a NUL.
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		if bytes.IndexByte(raw, '\n') < 0 {
			return nil, &ManifestError{Path: path, Msg: "The AOF manifest file contains too long line"}
		}
		line := strings.Trim(string(raw), " \t\r\n")
		fail := func(msg string) (*Manifest, error) {
			return nil, &ManifestError{Path: path, Line: lineNum, Text: line, Msg: msg}
		}
		if line == "" {
			return fail("Invalid AOF manifest file format")
		}
		argv, ok := splitArgs(line)
		if !ok || len(argv) < 6 || len(argv)%2 != 0 {
			return fail("Invalid AOF manifest file format")
		}
		var fi FileInfo
		haveName := false
		for i := 0; i < len(argv); i += 2 {
			key, val := cString(argv[i]), cString(argv[i+1])
			switch {
			case strings.EqualFold(key, "file"):
				fi.Name, haveName = val, true
				if !pathIsBaseName(val) {
					return fail("File can't be a path, just a filename")
				}
			case strings.EqualFold(key, "seq"):
				fi.Seq = atoll(val)
			case strings.EqualFold(key, "type"):
				fi.Type = 0
				if val != "" {
					fi.Type = FileType(val[0])
				}
			}
		}
		// Redis tests the name pointer, so "file ''" passes this check.
		if !haveName || fi.Seq == 0 || fi.Type == 0 {
			return fail("Invalid AOF manifest file format")
		}
		switch fi.Type {
		case TypeBase:
			if m.Base != nil {
				return fail("Found duplicate base file information")
			}
			b := fi
			m.Base = &b
			m.BaseSeq = fi.Seq
		case TypeHistory:
			m.History = append(m.History, fi)
		case TypeIncr:
			if fi.Seq <= maxSeq {
				return fail("Found a non-monotonic sequence number")
			}
			m.Incr = append(m.Incr, fi)
			m.IncrSeq, maxSeq = fi.Seq, fi.Seq
		default:
			return fail("Unknown AOF file type")
		}
	}
	if lineNum == 0 {
		return nil, &ManifestError{Path: path, Msg: "Found an empty AOF manifest"}
	}
	return m, nil
}

// Format returns the manifest's text as Redis' getAofManifestAsString
// writes it: the base first, then history, then incremental files, one
// "file <name> seq <seq> type <t>" line each, a name quoted (sdscatrepr)
// when it needs it.
func (m *Manifest) Format() []byte {
	var b []byte
	line := func(fi FileInfo) {
		b = append(b, "file "...)
		if needsRepr(fi.Name) {
			b = resp.AppendRepr(b, fi.Name)
		} else {
			b = append(b, fi.Name...)
		}
		b = append(b, " seq "...)
		b = strconv.AppendInt(b, fi.Seq, 10)
		b = append(b, " type "...)
		b = append(b, byte(fi.Type), '\n')
	}
	if m.Base != nil {
		line(*m.Base)
	}
	for _, fi := range m.History {
		line(fi)
	}
	for _, fi := range m.Incr {
		line(fi)
	}
	return b
}

// manifestName is <appendfilename>.manifest.
func manifestName(filename string) string { return filename + manifestSuffix }

// baseName is the base file of sequence seq (RDB format, as Redis with
// aof-use-rdb-preamble yes, its default).
func baseName(filename string, seq int64) string {
	return filename + "." + strconv.FormatInt(seq, 10) + baseSuffix + rdbFormat
}

// incrName is the incremental file of sequence seq.
func incrName(filename string, seq int64) string {
	return filename + "." + strconv.FormatInt(seq, 10) + incrSuffix + aofFormat
}

// readManifest reads dir's manifest; (nil, nil) when dir or the manifest
// does not exist.
func readManifest(dir, filename string) (*Manifest, error) {
	path := filepath.Join(dir, manifestName(filename))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Fatal error: can't open the AOF manifest file %s for reading: %s", path, strerror(err))
	}
	return ParseManifest(path, data)
}

// writeManifest replaces dir's manifest with m atomically, as Redis'
// writeAofManifestFile: write temp-<name>.manifest, fsync it, rename it over
// the manifest, fsync the directory (new files may have been added to it).
func writeManifest(dir, filename string, m *Manifest) error {
	name := manifestName(filename)
	tmp := filepath.Join(dir, tempPrefix+name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("Can't open the AOF manifest file %s: %s", tempPrefix+name, strerror(err))
	}
	_, err = f.Write(m.Format())
	if err != nil {
		f.Close()
		return fmt.Errorf("Error trying to write the temporary AOF manifest file %s: %s", tempPrefix+name, strerror(err))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("Fail to fsync the temp AOF file %s: %s.", tempPrefix+name, strerror(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("Error trying to write the temporary AOF manifest file %s: %s", tempPrefix+name, strerror(err))
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("Error trying to rename the temporary AOF manifest file %s into %s: %s", tempPrefix+name, name, strerror(err))
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("Fail to fsync AOF directory %s: %s.", filepath.Join(dir, name), strerror(err))
	}
	return nil
}

// syncDir fsyncs a directory so that names created, renamed or removed in
// it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// pathIsBaseName is Redis' pathIsBaseName: no '/' and no '\'.
func pathIsBaseName(p string) bool { return !strings.ContainsAny(p, "/\\") }

// cString cuts s at its first NUL, as Redis' C strings end there.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// atoll is C's atoll, which is strtol on a 64-bit long.
func atoll(s string) int64 { return strtol([]byte(s)) }

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// splitArgs is Redis' sdssplitargs on a C string (it ends at a NUL):
// core/resp's splitter of inline commands, which follows the same rules.
// ok is false on unbalanced quotes.
func splitArgs(line string) (args []string, ok bool) {
	argv, ok := resp.SplitArgs([]byte(cString(line)))
	if !ok || len(argv) == 0 {
		return nil, ok
	}
	args = make([]string, len(argv))
	for i, a := range argv {
		args[i] = string(a)
	}
	return args, true
}

// needsRepr is Redis' sdsneedsrepr.
func needsRepr(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b':
			return true
		case c < 0x20 || c > 0x7e || c == ' ':
			return true
		}
	}
	return false
}
