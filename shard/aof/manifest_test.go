package aof

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseManifestValid(t *testing.T) {
	text := "# a comment\n" +
		"file appendonly.aof.2.base.rdb seq 2 type b\n" +
		"file appendonly.aof.1.incr.aof seq 1 type h\n" +
		"  FILE appendonly.aof.3.incr.aof SEQ 3 TYPE i future-key value  \r\n" +
		"file \"with space.aof\" seq 4 type i\n"
	m, err := ParseManifest("m", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{
		Base:    &FileInfo{"appendonly.aof.2.base.rdb", 2, TypeBase},
		History: []FileInfo{{"appendonly.aof.1.incr.aof", 1, TypeHistory}},
		Incr:    []FileInfo{{"appendonly.aof.3.incr.aof", 3, TypeIncr}, {"with space.aof", 4, TypeIncr}},
		BaseSeq: 2, IncrSeq: 4,
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
	// Format writes base, history, incremental, quoting what needs it.
	got := string(m.Format())
	wantText := "file appendonly.aof.2.base.rdb seq 2 type b\n" +
		"file appendonly.aof.1.incr.aof seq 1 type h\n" +
		"file appendonly.aof.3.incr.aof seq 3 type i\n" +
		"file \"with space.aof\" seq 4 type i\n"
	if got != wantText {
		t.Fatalf("Format:\n%s\nwant:\n%s", got, wantText)
	}
}

func TestManifestFormatRoundTrip(t *testing.T) {
	names := []string{"plain.aof", "sp ace", "quo\"te", "tab\there", "nl\nx", "bin\x01\x7f\xff", "é"}
	m := &Manifest{}
	for i, n := range names {
		m.Incr = append(m.Incr, FileInfo{Name: n, Seq: int64(i + 1), Type: TypeIncr})
		m.IncrSeq = int64(i + 1)
	}
	back, err := ParseManifest("m", m.Format())
	if err != nil {
		t.Fatalf("%v\n%s", err, m.Format())
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip:\n%+v\n%+v", back, m)
	}
}

// TestParseManifestErrors checks each refusal's text against Redis' and
// against the real redis-check-aof, which parses manifests with the same
// function as the server.
func TestParseManifestErrors(t *testing.T) {
	long := "file " + strings.Repeat("a", 1100) + " seq 1 type i\n"
	cases := []struct {
		name, text, msg string
		line            int
	}{
		{"empty", "", "Found an empty AOF manifest", 0},
		{"blank line", "file a seq 1 type i\n   \n", "Invalid AOF manifest file format", 2},
		{"too few words", "file a seq 1 type\n", "Invalid AOF manifest file format", 1},
		{"odd words", "file a seq 1 type i x\n", "Invalid AOF manifest file format", 1},
		{"unbalanced quotes", "file \"a seq 1 type i\n", "Invalid AOF manifest file format", 1},
		{"no seq", "file a sek 1 type i\n", "Invalid AOF manifest file format", 1},
		{"seq zero", "file a seq 0 type i\n", "Invalid AOF manifest file format", 1},
		{"no type value", "file a seq 1 type ''\n", "Invalid AOF manifest file format", 1},
		{"path", "file dir/a seq 1 type i\n", "File can't be a path, just a filename", 1},
		{"unknown type", "file a seq 1 type x\n", "Unknown AOF file type", 1},
		{"two bases", "file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information", 2},
		{"non-monotonic", "file a seq 2 type i\nfile b seq 2 type i\n", "Found a non-monotonic sequence number", 2},
		{"too long", long, "The AOF manifest file contains too long line", 0},
		{"no final newline", "file a seq 1 type i", "The AOF manifest file contains too long line", 0},
	}
	checkAOFBin := tool(t, "redis-check-aof")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseManifest("m", []byte(c.text))
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("got %v; want a ManifestError", err)
			}
			if me.Msg != c.msg || me.Line != c.line {
				t.Fatalf("got %q at line %d; want %q at line %d", me.Msg, me.Line, c.msg, c.line)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, manifestName(DefaultFilename))
			if c.text == "" {
				// redis-check-aof takes an empty file for an old-style
				// AOF; ask the server instead.
				aofDir := filepath.Join(dir, "appendonlydir")
				if err := os.Mkdir(aofDir, 0o755); err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(aofDir, manifestName(DefaultFilename))
			}
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.text == "" {
				if log := runRedisUntilExit(t, dir); !strings.Contains(log, c.msg) {
					t.Fatalf("redis-server does not agree:\n%s", log)
				}
				return
			}
			out, err := exec.Command(checkAOFBin, path).CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.msg) {
				t.Fatalf("redis-check-aof does not agree (err %v):\n%s", err, out)
			}
		})
	}
}

// TestParseManifestAcceptedByRedis: manifests Redis accepts (odd keys,
// comments, quoted names) are accepted here too, with the same files.
func TestParseManifestAcceptedByRedis(t *testing.T) {
	dir := t.TempDir()
	names := []string{"appendonly.aof.1.base.rdb", "sp ace.aof", "x.aof"}
	if err := os.WriteFile(filepath.Join(dir, names[0]), EmptyRDB(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[1:] {
		if err := os.WriteFile(filepath.Join(dir, n), enc("SET", "k", n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := "# comment line\n" +
		"file appendonly.aof.1.base.rdb seq 1 type b newkey ignored\n" +
		"FILE \"sp ace.aof\" Seq 5 tYpE i\n" +
		"seq 9 type incr file 'x.aof'\n"
	path := filepath.Join(dir, manifestName(DefaultFilename))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	checkAOF(t, path)
	m, err := ParseManifest(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if m.Base.Name != names[0] || len(m.Incr) != 2 || m.Incr[0].Name != "sp ace.aof" || m.Incr[1].Seq != 9 {
		t.Fatalf("parsed %+v", m)
	}
	_, cmds, _, err := loadAll(t, dir, DefaultFilename, false)
	if err != nil || strings.Join(cmds, "|") != "SET k sp ace.aof|SET k x.aof" {
		t.Fatalf("load: %v %q", err, cmds)
	}
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"a b  c", []string{"a", "b", "c"}, true},
		{`"a b" 'c d'`, []string{"a b", "c d"}, true},
		{`"\x41\n\"" x`, []string{"A\n\"", "x"}, true},
		{`'it\'s'`, []string{"it's"}, true},
		{`a"b c"`, []string{"ab c"}, true},
		{`"a"b`, nil, false},
		{`"abc`, nil, false},
		{"a\x00b c", []string{"a"}, true},
		{"", nil, true},
	}
	for _, c := range cases {
		got, ok := splitArgs(c.in)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestAtoll(t *testing.T) {
	for in, want := range map[string]int64{"12": 12, " -3x": -3, "+7": 7, "x": 0, "99999999999999999999": 1<<63 - 1} {
		if got := atoll(in); got != want {
			t.Errorf("atoll(%q) = %d; want %d", in, got, want)
		}
	}
}

func TestWriteManifestAtomic(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Base: &FileInfo{"b", 1, TypeBase}, BaseSeq: 1}
	if err := writeManifest(dir, DefaultFilename, m); err != nil {
		t.Fatal(err)
	}
	// A stale temp file from a crash is simply overwritten.
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+manifestName(DefaultFilename)), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Incr = []FileInfo{{"i", 1, TypeIncr}}
	if err := writeManifest(dir, DefaultFilename, m); err != nil {
		t.Fatal(err)
	}
	got, err := readManifest(dir, DefaultFilename)
	if err != nil || !reflect.DeepEqual(got, &Manifest{Base: m.Base, Incr: m.Incr, BaseSeq: 1, IncrSeq: 1}) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, tempPrefix+manifestName(DefaultFilename))); !os.IsNotExist(err) {
		t.Fatalf("the temp manifest is left behind: %v", err)
	}
}

func TestEmptyRDBPassesRedisCheckRDB(t *testing.T) {
	if got := redisCRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64 check value %x", got)
	}
	for name, data := range map[string][]byte{"empty": EmptyRDB(), "strings": rdbWithStrings("k", "v", "k2", "v2")} {
		path := filepath.Join(t.TempDir(), name+".rdb")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool(t, "redis-check-rdb"), path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "RDB looks OK") {
			t.Fatalf("redis-check-rdb %s: %v\n%s", name, err, out)
		}
	}
}
