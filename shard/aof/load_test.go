package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func readAllCommands(t testing.TB, data []byte) ([]string, error) {
	t.Helper()
	rd := NewCommandReader(bytes.NewReader(data), int64(len(data)))
	var out []string
	for {
		args, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cmdText(args))
	}
}

func TestCommandReader(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		errAt    int64 // -1: no error
		trunc    bool
	}{
		{"two commands", string(enc("SET", "a", "1")) + string(enc("DEL", "a")), []string{"SET a 1", "DEL a"}, -1, false},
		{"annotation", "#TS:1700000000\r\n" + string(enc("PING")), []string{"PING"}, -1, false},
		{"binary and empty args", string(enc("SET", "k\r\nx", "")), []string{"SET k\r\nx "}, -1, false},
		{"crlf not checked", "*1\r\n$4\r\nPINGxx", []string{"PING"}, -1, false},
		{"atoi prefix", "*1junk\r\n$4 x\r\nPING\r\n", []string{"PING"}, -1, false},
		{"not star", "$1\r\n", nil, 0, false},
		{"zero args", "*0\r\n", nil, 0, false},
		{"negative args", "*-1\r\n", nil, 0, false},
		{"not dollar", "*1\r\n:4\r\n", nil, 4, false},
		{"negative length", "*1\r\n$-1\r\n", nil, 4, false},
		{"just star", "*", nil, 1, true},
		{"length beyond end", "*1\r\n$10\r\nPING\r\n", nil, 15, true},
		{"missing arg", "*2\r\n$4\r\nPING\r\n", nil, 14, true},
		{"missing crlf", "*1\r\n$4\r\nPING\r", nil, 13, true},
		{"header without newline", "*1\r\n$4", nil, 6, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAllCommands(t, []byte(c.in))
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("commands %q; want %q", got, c.want)
			}
			if c.errAt < 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset != c.errAt || pe.Truncated != c.trunc {
				t.Fatalf("got %v; want a ParseError at %d truncated=%v", err, c.errAt, c.trunc)
			}
		})
	}
}

// TestLoadRealRedisAOF: a real redis-server 7.0 writes an appendonlydir
// (SET, RPUSH, EXPIRE, MULTI/EXEC, SELECT), is shut down, and Load reads it:
// the base callback gets its RDB base and the commands arrive in order, as
// Redis propagates them (EXPIRE becomes PEXPIREAT, a SELECT opens the file).
func TestLoadRealRedisAOF(t *testing.T) {
	dataDir := t.TempDir()
	rs := startRedis(t, dataDir)
	ctx := t.Context()
	c := rs.Client
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, "a", "1", 0).Err())
	must(c.RPush(ctx, "list", "x", "y z").Err())
	must(c.Expire(ctx, "a", 100*time.Second).Err())
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "b", "2", 0)
		p.Incr(ctx, "b")
		return nil
	})
	must(err)
	must(c.Do(ctx, "SELECT", "0").Err())
	must(c.Do(ctx, "DEL", "nothing").Err()) // not propagated: deleted nothing
	before := time.Now().UnixMilli()
	rs.Shutdown(t)

	dir := filepath.Join(dataDir, "appendonlydir")
	checkAOF(t, filepath.Join(dir, manifestName(DefaultFilename)))
	basePath, cmds, info, err := loadAll(t, dir, DefaultFilename, false)
	if err != nil {
		t.Fatal(err)
	}
	if basePath != filepath.Join(dir, "appendonly.aof.1.base.rdb") {
		t.Fatalf("base %q", basePath)
	}
	if !info.Exists || info.Truncated || info.Files != 2 {
		t.Fatalf("info %+v", info)
	}
	want := []string{"SELECT 0", "set a 1", "rpush list x y z", "PEXPIREAT a *", "MULTI", "set b 2", "incr b", "EXEC"}
	if len(cmds) != len(want) {
		t.Fatalf("commands %q; want %q", cmds, want)
	}
	for i, w := range want {
		if strings.HasSuffix(w, "*") {
			prefix := strings.TrimSuffix(w, "*")
			at, err := strconv.ParseInt(strings.TrimPrefix(cmds[i], prefix), 10, 64)
			if !strings.HasPrefix(cmds[i], prefix) || err != nil || at < before+90_000 || at > before+101_000 {
				t.Fatalf("command %d: %q; want %s about now+100s", i, cmds[i], w)
			}
			continue
		}
		if !strings.EqualFold(cmds[i], w) {
			t.Fatalf("command %d: %q; want %q (all: %q)", i, cmds[i], w, cmds)
		}
	}
}

// finalCommandDir writes an AOF whose last incremental file ends with
// last, and returns the directory, the last file's path and where last
// starts in it.
func finalCommandDir(t *testing.T, last []byte) (string, string, int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "appendonlydir")
	first := append(enc("SELECT", "0"), enc("SET", "k1", "v1")...)
	second := append(enc("SELECT", "0"), enc("RPUSH", "l", "a", "b")...)
	start := int64(len(second))
	second = append(second, last...)
	writeAOFDir(t, dir, first, second)
	return dir, filepath.Join(dir, incrName(DefaultFilename, 2)), start
}

// TestLoadTruncatedAtEveryOffset cuts the last incremental file at every
// byte of its final command.
func TestLoadTruncatedAtEveryOffset(t *testing.T) {
	final := enc("SET", "key", "a value\r\nwith a CRLF")
	src, last, start := finalCommandDir(t, final)
	wantPrefix := "SELECT 0|SET k1 v1|SELECT 0|RPUSH l a b"
	for cut := start + 1; cut < start+int64(len(final)); cut++ {
		dir := copyDir(t, src)
		path := filepath.Join(dir, filepath.Base(last))
		if err := os.Truncate(path, cut); err != nil {
			t.Fatal(err)
		}

		_, cmds, _, err := loadAll(t, dir, DefaultFilename, false)
		var le *LoadError
		if !errors.As(err, &le) || !strings.HasPrefix(le.Msg, "Unexpected end of file reading the append only file appendonly.aof.2.incr.aof. You can: 1) Make a backup") ||
			le.File != "appendonly.aof.2.incr.aof" {
			t.Fatalf("cut at %d, aof-load-truncated no: got %v", cut, err)
		}
		if st, _ := os.Stat(path); st.Size() != cut {
			t.Fatalf("cut at %d: the file was changed without aof-load-truncated (size %d)", cut, st.Size())
		}
		_ = cmds

		_, cmds, info, err := loadAll(t, dir, DefaultFilename, true)
		if err != nil {
			t.Fatalf("cut at %d, aof-load-truncated yes: %v", cut, err)
		}
		if got := strings.Join(cmds, "|"); got != wantPrefix {
			t.Fatalf("cut at %d: loaded %q; want %q", cut, got, wantPrefix)
		}
		if !info.Truncated || info.TruncatedFile != "appendonly.aof.2.incr.aof" || info.TruncatedAt != start {
			t.Fatalf("cut at %d: info %+v", cut, info)
		}
		if st, _ := os.Stat(path); st.Size() != start {
			t.Fatalf("cut at %d: file is %d bytes; want it truncated to %d", cut, st.Size(), start)
		}
		// The truncated AOF is valid and loads again without truncation.
		_, again, info, err := loadAll(t, dir, DefaultFilename, false)
		if err != nil || info.Truncated || strings.Join(again, "|") != wantPrefix {
			t.Fatalf("cut at %d: reload: %v %+v %q", cut, err, info, again)
		}
	}
}

func TestLoadTruncatedNotLastFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "appendonlydir")
	writeAOFDir(t, dir, enc("SET", "a", "1")[:10], enc("SET", "b", "2"))
	_, _, _, err := loadAll(t, dir, DefaultFilename, true)
	var le *LoadError
	if !errors.As(err, &le) || le.Msg != "Fatal error: the truncated file is not the last file" {
		t.Fatalf("got %v", err)
	}
	if st, _ := os.Stat(filepath.Join(dir, incrName(DefaultFilename, 1))); st.Size() != 10 {
		t.Fatalf("the first file was changed")
	}
}

// TestLoadUnterminatedMulti: a MULTI block the file ends inside is never
// applied; with aof-load-truncated the file is cut before the MULTI, as
// Redis does ("Revert incomplete MULTI/EXEC transaction").
func TestLoadUnterminatedMulti(t *testing.T) {
	block := append(enc("MULTI"), enc("SET", "x", "1")...)
	block = append(block, enc("INCR", "x")...)
	src, last, start := finalCommandDir(t, block)
	dir := copyDir(t, src)
	if _, _, _, err := loadAll(t, dir, DefaultFilename, false); err == nil || !strings.Contains(err.Error(), "Unexpected end of file") {
		t.Fatalf("aof-load-truncated no: got %v", err)
	}
	_, cmds, info, err := loadAll(t, dir, DefaultFilename, true)
	if err != nil || !info.Truncated || !info.RevertedMulti || info.TruncatedAt != start {
		t.Fatalf("%v %+v", err, info)
	}
	if got := strings.Join(cmds, "|"); got != "SELECT 0|SET k1 v1|SELECT 0|RPUSH l a b" {
		t.Fatalf("loaded %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, filepath.Base(last))); st.Size() != start {
		t.Fatalf("size %d; want %d", st.Size(), start)
	}
	// A complete block is handed over whole, MULTI and EXEC included.
	dir = copyDir(t, src)
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(last)), append(enc("SELECT", "0"), append(block, enc("EXEC")...)...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cmds, _, err = loadAll(t, dir, DefaultFilename, false)
	if got := strings.Join(cmds, "|"); err != nil || got != "SELECT 0|SET k1 v1|SELECT 0|MULTI|SET x 1|INCR x|EXEC" {
		t.Fatalf("%v %q", err, got)
	}
}

// TestLoadTruncatedAsRedis compares where Load cuts a truncated AOF with
// where a real redis-server 7.0 with aof-load-truncated yes cuts it.
func TestLoadTruncatedAsRedis(t *testing.T) {
	block := append(enc("MULTI"), enc("SET", "x", "1")...)
	cases := map[string][]byte{
		"mid-command":  enc("SET", "key", "value")[:15],
		"open MULTI":   block,
		"after header": []byte("*3\r\n"),
	}
	re := regexp.MustCompile(`Truncating the AOF (\S+) at offset (\d+)`)
	for name, tail := range cases {
		t.Run(name, func(t *testing.T) {
			src, last, _ := finalCommandDir(t, tail)
			ours := copyDir(t, src)
			_, _, info, err := loadAll(t, ours, DefaultFilename, true)
			if err != nil {
				t.Fatal(err)
			}
			dataDir := t.TempDir()
			theirs := filepath.Join(dataDir, "appendonlydir")
			if err := os.Rename(copyDir(t, src), theirs); err != nil {
				t.Fatal(err)
			}
			rs := startRedis(t, dataDir, "--aof-load-truncated", "yes")
			m := re.FindStringSubmatch(rs.log.String())
			if m == nil {
				t.Fatalf("redis did not truncate:\n%s", rs.log.String())
			}
			if m[1] != info.TruncatedFile || m[2] != strconv.FormatInt(info.TruncatedAt, 10) {
				t.Fatalf("redis truncated %s at %s; we at %s %d", m[1], m[2], info.TruncatedFile, info.TruncatedAt)
			}
			st, _ := os.Stat(filepath.Join(theirs, filepath.Base(last)))
			if st.Size() != info.TruncatedAt {
				t.Fatalf("redis left %d bytes; we %d", st.Size(), info.TruncatedAt)
			}
		})
	}
}

func TestLoadCorruptMiddle(t *testing.T) {
	src, last, start := finalCommandDir(t, enc("SET", "k", "v"))
	// The RPUSH starts after SELECT 0 in the last file.
	rpushAt := int64(len(enc("SELECT", "0")))
	for _, c := range []struct {
		at     int64
		b      byte
		offset int64
	}{
		{rpushAt, 'X', rpushAt},          // '*' of RPUSH
		{rpushAt + 4, '#', rpushAt + 4},  // '$' of its first argument
		{start, '+', start},              // '*' of the last command
		{start + 1, 'z', start},          // its count: atoi("z") is 0
		{rpushAt + 5, '-', rpushAt + 10}, // "$-": strtol reads 0, "RP" are the skipped CRLF, "USH" is where '$' is expected
		{rpushAt + 10, 'Q', rpushAt + 4}, // payload changes, then the '$' line is off: CRLF is not checked, the next header is
	} {
		dir := copyDir(t, src)
		path := filepath.Join(dir, filepath.Base(last))
		data, _ := os.ReadFile(path)
		data[c.at] = c.b
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, truncOK := range []bool{false, true} {
			_, _, _, err := loadAll(t, dir, DefaultFilename, truncOK)
			var le *LoadError
			if c.at == rpushAt+10 {
				// "RPUSH" -> "RPUQH": a well-formed command; apply sees it.
				if err != nil {
					t.Fatalf("byte %d: %v", c.at, err)
				}
				continue
			}
			if !errors.As(err, &le) || le.Msg != "Bad file format reading the append only file appendonly.aof.2.incr.aof: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>" ||
				le.Offset != c.offset {
				t.Fatalf("byte %d = %q (truncatedOK %v): got %v; want bad format at %d", c.at, c.b, truncOK, err, c.offset)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("offset %d", c.offset)) {
				t.Fatalf("error does not name the offset: %v", err)
			}
		}
	}
}

func TestLoadApplyErrorNamesFileAndOffset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "appendonlydir")
	writeAOFDir(t, dir, append(enc("SET", "a", "1"), enc("FOO", "x")...))
	_, err := Load(dir, DefaultFilename, false, func(string, bool) error { return nil }, func(args [][]byte) error {
		if string(args[0]) == "FOO" {
			return fmt.Errorf("Unknown command '%s'", args[0])
		}
		return nil
	})
	var le *LoadError
	if !errors.As(err, &le) || le.Msg != "Unknown command 'FOO' reading the append only file appendonly.aof.1.incr.aof" ||
		le.Offset != int64(len(enc("SET", "a", "1"))) {
		t.Fatalf("got %v", err)
	}
}

func TestLoadMissingFileAndNoAOF(t *testing.T) {
	info, err := Load(filepath.Join(t.TempDir(), "appendonlydir"), DefaultFilename, false, nil, nil)
	if err != nil || info.Exists {
		t.Fatalf("no AOF: %+v %v", info, err)
	}
	dir := filepath.Join(t.TempDir(), "appendonlydir")
	writeAOFDir(t, dir, enc("SET", "a", "1"))
	os.Remove(filepath.Join(dir, incrName(DefaultFilename, 1)))
	_, _, _, err = loadAll(t, dir, DefaultFilename, true)
	if err == nil || !strings.Contains(err.Error(), "Unable to obtain the AOF file appendonly.aof.1.incr.aof length. stat: No such file or directory") {
		t.Fatalf("got %v", err)
	}
}

// TestLoadUpgradesOldStyleAOF: a Redis 6 style <data-dir>/appendonly.aof is
// moved into the directory as its base, as Redis 7 does, both when it holds
// commands only and when it starts with an RDB preamble.
func TestLoadUpgradesOldStyleAOF(t *testing.T) {
	for name, content := range map[string][]byte{
		"commands":     append(enc("SELECT", "0"), enc("SET", "old", "1")...),
		"rdb preamble": append(rdbWithStrings("p", "q"), append(enc("SELECT", "0"), enc("SET", "old", "1")...)...),
	} {
		t.Run(name, func(t *testing.T) {
			dataDir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dataDir, DefaultFilename), content, 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(dataDir, "appendonlydir")
			var bases []string
			var cmds []string
			info, err := Load(dir, DefaultFilename, false,
				func(path string, isRDB bool) error {
					bases = append(bases, fmt.Sprintf("%s %v", filepath.Base(path), isRDB))
					return nil
				},
				func(args [][]byte) error { cmds = append(cmds, cmdText(args)); return nil })
			if err != nil || !info.Upgraded {
				t.Fatalf("%v %+v", err, info)
			}
			wantBase := "appendonly.aof " + strconv.FormatBool(name != "commands")
			if len(bases) != 1 || bases[0] != wantBase || strings.Join(cmds, "|") != "SELECT 0|SET old 1" {
				t.Fatalf("bases %q commands %q", bases, cmds)
			}
			m, _ := readManifest(dir, DefaultFilename)
			if m.Base == nil || m.Base.Name != DefaultFilename || m.Base.Seq != 1 {
				t.Fatalf("manifest %+v", m)
			}
			if _, err := os.Stat(filepath.Join(dataDir, DefaultFilename)); !os.IsNotExist(err) {
				t.Fatal("the old file is still in the data dir")
			}
			// Open continues it with an incremental file, and redis-check-aof
			// accepts the result.
			l, err := Open(dir, DefaultFilename, FsyncAlways)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.WaitDurable(l.Append(enc("SET", "new", "2"))); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			checkAOF(t, filepath.Join(dir, manifestName(DefaultFilename)))
		})
	}
}
