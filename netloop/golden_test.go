package netloop_test

// Golden scripts: the files in ../shard/testdata/*.txt are run against svcdb
// (TestGolden: both drain strategies, 1 and 4 shards) and against a real
// redis-server (TestGoldenAgainstRedis), so every expectation is checked to be
// Redis' own behaviour.
//
// # Script format
//
// A script is a list of blocks separated by blank lines. A block is
//
//	# optional comment lines
//	COMMAND arg "quoted arg" 'single quoted'
//	----
//	expected reply
//
// The command line is split as redis-cli splits it (sdssplitargs): spaces
// separate arguments, "double quotes" understand \n \r \t \b \a \\ \" and
// \xHH, 'single quotes' understand only \'. A block made only of comments is
// allowed. A line starting with # is a comment only at the start of a block.
//
// The expected reply is one line:
//
//	+OK                    simple string
//	-ERR syntax error      error (the whole text, byte for byte)
//	:1                     integer
//	"bar"                  bulk string, Go-quoted (strconv.Quote)
//	(nil)                  null bulk, null array or RESP3 null
//	["a", :1, (nil), []]   array, elements formatted recursively
//	~regexp                the formatted reply must match regexp entirely
//	                       (for TTLs and other values that vary)
//
// Other RESP3 types (not used by the scripts today) format as ,1.5 (double),
// #t (boolean), (big)123, {k: v} (map), set[...] and push[...].
//
// Directives take the place of the command line; none is a Redis command:
//
//	sleep 120              wait 120 milliseconds (no ---- and no reply)
//	sorted KEYS *          run the command and sort the top-level array of its
//	                       reply (for replies whose order is unspecified)
//	scanall MATCH k* TYPE string COUNT 3
//	                       SCAN from cursor 0 (with the given options) until the
//	                       cursor is 0 again; the reply is the sorted list of
//	                       unique keys returned, so cursor values do not matter
//	multishard k1 k2 ...   (no reply) with svcdb and more than one shard, fail
//	                       unless the keys live on at least two shards: proves a
//	                       hash tag script really exercises a multi-shard
//	                       command. A no-op for Redis and for one shard.
//	sameshard k1 k2 ...    (no reply) with svcdb, fail unless the keys all live
//	                       on one shard (hash tags). A no-op for Redis.
//	push                   send nothing; read the next value the server sent
//	                       on its own (a RESP3 push such as an invalidation),
//	                       which must come: the expectation follows ----
//
// A block whose comments contain "# svcdb-only: <reason>" is skipped against
// Redis: it documents a deliberate difference. Keep such blocks rare.
//
// Each script runs on a new connection after FLUSHALL, in order, with state
// carried from block to block.
//
// # Rewriting
//
//	go test ./netloop -run 'TestGolden$' -rewrite
//
// rewrites the expectations from svcdb's output (run-to-completion, 4 shards),
// and
//
//	go test ./netloop -run TestGoldenAgainstRedis -rewrite-from-redis
//
// from a real redis-server (svcdb-only blocks are left alone). A ~regexp
// expectation is kept while it still matches. Review the diff: committed
// expectations must pass TestGoldenAgainstRedis.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
)

var (
	goldenRewrite          = flag.Bool("rewrite", false, "TestGolden: rewrite shard/testdata/*.txt expectations from svcdb's replies")
	goldenRewriteFromRedis = flag.Bool("rewrite-from-redis", false, "TestGoldenAgainstRedis: rewrite shard/testdata/*.txt expectations from redis-server's replies")
)

const goldenDir = "../shard/testdata"

// goldenBlock is one command (or directive) of a script.
type goldenBlock struct {
	line      int    // 1-based line of the command line
	cmdLine   string // as written
	args      []string
	svcdbOnly string // the reason, when the block is skipped for Redis
	expect    string // the expectation line, when hasExpect
	hasExpect bool
	expectIdx int // index of the expectation line in goldenScript.lines
}

type goldenScript struct {
	name   string // file name without .txt
	path   string
	lines  []string
	blocks []*goldenBlock
}

func loadGoldenScripts(t *testing.T) []*goldenScript {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no golden scripts in %s", goldenDir)
	}
	var out []*goldenScript
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := parseGoldenScript(p, string(data))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func parseGoldenScript(path, text string) (*goldenScript, error) {
	s := &goldenScript{
		name:  strings.TrimSuffix(filepath.Base(path), ".txt"),
		path:  path,
		lines: strings.Split(strings.TrimSuffix(text, "\n"), "\n"),
	}
	fail := func(i int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, i+1, fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(s.lines); {
		if strings.TrimSpace(s.lines[i]) == "" {
			i++
			continue
		}
		// One block: comments, command, optionally ---- and the expectation.
		b := &goldenBlock{}
		for ; i < len(s.lines) && strings.HasPrefix(s.lines[i], "#"); i++ {
			if r, ok := strings.CutPrefix(s.lines[i], "# svcdb-only:"); ok {
				b.svcdbOnly = strings.TrimSpace(r)
				if b.svcdbOnly == "" {
					return nil, fail(i, "svcdb-only needs a reason")
				}
			}
		}
		if i == len(s.lines) || strings.TrimSpace(s.lines[i]) == "" {
			if b.svcdbOnly != "" {
				return nil, fail(i-1, "svcdb-only comment without a block")
			}
			continue // a comment-only block
		}
		b.line, b.cmdLine = i+1, s.lines[i]
		args, err := splitArgs(b.cmdLine)
		if err != nil {
			return nil, fail(i, "%v", err)
		}
		if len(args) == 0 {
			return nil, fail(i, "empty command")
		}
		b.args = args
		i++
		if i < len(s.lines) && s.lines[i] == "----" {
			if i+1 >= len(s.lines) || strings.TrimSpace(s.lines[i+1]) == "" {
				return nil, fail(i, "---- without an expectation line")
			}
			b.hasExpect, b.expectIdx, b.expect = true, i+1, s.lines[i+1]
			i += 2
		}
		if i < len(s.lines) && strings.TrimSpace(s.lines[i]) != "" {
			return nil, fail(i, "unexpected line %q (blocks are separated by blank lines)", s.lines[i])
		}
		switch strings.ToLower(args[0]) {
		case "sleep":
			if len(args) != 2 || b.hasExpect {
				return nil, fail(b.line-1, "usage: sleep <ms> (no expectation)")
			}
			if _, err := strconv.Atoi(args[1]); err != nil {
				return nil, fail(b.line-1, "sleep: %v", err)
			}
		case "multishard", "sameshard":
			if len(args) < 3 || b.hasExpect {
				return nil, fail(b.line-1, "usage: %s key key ... (no expectation)", args[0])
			}
		case "push":
			if len(args) != 1 || !b.hasExpect {
				return nil, fail(b.line-1, "usage: push, with an expectation")
			}
		case "sorted":
			if len(args) < 2 || !b.hasExpect {
				return nil, fail(b.line-1, "usage: sorted COMMAND ..., with an expectation")
			}
		default:
			if !b.hasExpect {
				return nil, fail(b.line-1, "command without ---- and an expected reply")
			}
		}
		if b.hasExpect && strings.HasPrefix(b.expect, "~") {
			if _, err := regexp.Compile(b.expect[1:]); err != nil {
				return nil, fail(b.expectIdx, "bad regexp: %v", err)
			}
		}
		s.blocks = append(s.blocks, b)
	}
	return s, nil
}

// splitArgs splits a command line as Redis' sdssplitargs does.
func splitArgs(line string) ([]string, error) {
	var args []string
	p := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' }
	isHex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	at := func(i int) byte { // NUL past the end, as in C
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, nil
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					v, _ := strconv.ParseUint(line[p+2:p+4], 16, 8)
					cur = append(cur, byte(v))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					e := line[p]
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
				case c == '"':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return nil, fmt.Errorf("closing quote must be followed by a space or nothing at all")
					}
					done = true
				case c == 0 && p >= len(line):
					return nil, fmt.Errorf("unbalanced quotes")
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return nil, fmt.Errorf("closing quote must be followed by a space or nothing at all")
					}
					done = true
				case c == 0 && p >= len(line):
					return nil, fmt.Errorf("unbalanced quotes")
				default:
					cur = append(cur, c)
				}
			default:
				switch {
				case p >= len(line) || isSpace(c):
					done = true
				case c == '"':
					inq = true
				case c == '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// formatReply renders v in the scripts' one-line form.
func formatReply(v resp.Value) string {
	var sb strings.Builder
	writeReply(&sb, v)
	return sb.String()
}

func writeReply(sb *strings.Builder, v resp.Value) {
	if v.Null || v.Type == '_' {
		sb.WriteString("(nil)")
		return
	}
	list := func(open, close string, elems []resp.Value, sep func(i int) string) {
		sb.WriteString(open)
		for i, e := range elems {
			if i > 0 {
				sb.WriteString(sep(i))
			}
			writeReply(sb, e)
		}
		sb.WriteString(close)
	}
	comma := func(int) string { return ", " }
	switch v.Type {
	case '+', '-':
		sb.WriteByte(v.Type)
		sb.Write(v.Str)
	case ':':
		sb.WriteString(":" + strconv.FormatInt(v.Int, 10))
	case '$', '=':
		sb.WriteString(strconv.Quote(string(v.Str)))
	case '!':
		sb.WriteString("!" + strconv.Quote(string(v.Str)))
	case '(':
		sb.WriteString("(big)" + string(v.Str))
	case ',':
		sb.WriteString("," + string(v.Str))
	case '#':
		if v.Bool {
			sb.WriteString("#t")
		} else {
			sb.WriteString("#f")
		}
	case '*':
		list("[", "]", v.Elems, comma)
	case '~':
		list("set[", "]", v.Elems, comma)
	case '>':
		list("push[", "]", v.Elems, comma)
	case '%':
		list("{", "}", v.Elems, func(i int) string {
			if i%2 == 1 {
				return ": "
			}
			return ", "
		})
	default:
		fmt.Fprintf(sb, "(type %q)", v.Type)
	}
}

// goldenTarget is what a script runs against.
type goldenTarget struct {
	addr  string
	redis bool
	rt    *shard.Runtime // svcdb only
}

// goldenResult is one block's outcome, for reporting and rewriting.
type goldenResult struct {
	b   *goldenBlock
	got string
}

// runGoldenScript runs s on a fresh connection after FLUSHALL and reports
// mismatches. It returns the formatted replies of the blocks that have an
// expectation and were run.
func runGoldenScript(t *testing.T, tg goldenTarget, s *goldenScript) []goldenResult {
	t.Helper()
	c := dialRaw(t, tg.addr)
	if v := c.do("FLUSHALL"); formatReply(v) != "+OK" {
		t.Fatalf("FLUSHALL: %s", formatReply(v))
	}
	var results []goldenResult
	for _, b := range s.blocks {
		if tg.redis && b.svcdbOnly != "" {
			continue
		}
		var got string
		switch strings.ToLower(b.args[0]) {
		case "sleep":
			ms, _ := strconv.Atoi(b.args[1])
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		case "multishard", "sameshard":
			if tg.rt != nil && tg.rt.NumShards() > 1 {
				var shards []int
				for _, k := range b.args[1:] {
					shards = append(shards, tg.rt.ShardOf([]byte(k)))
				}
				one := !slices.ContainsFunc(shards, func(n int) bool { return n != shards[0] })
				if want := strings.ToLower(b.args[0]) == "sameshard"; one != want {
					t.Errorf("%s:%d: %s: keys %q live on shards %v of %d",
						s.path, b.line, b.args[0], b.args[1:], shards, tg.rt.NumShards())
				}
			}
			continue
		case "sorted":
			v := c.do(b.args[1:]...)
			if v.Type == '*' && !v.Null {
				slices.SortFunc(v.Elems, func(a, b resp.Value) int { return strings.Compare(formatReply(a), formatReply(b)) })
			}
			got = formatReply(v)
		case "scanall":
			got = scanAll(t, c, b.args[1:])
		case "push":
			got = formatReply(c.read())
		default:
			got = formatReply(c.do(b.args...))
		}
		results = append(results, goldenResult{b, got})
		if !expectMatches(b.expect, got) {
			where := "svcdb"
			if tg.redis {
				where = "redis-server"
			}
			t.Errorf("%s:%d: %s\n  want: %s\n  got (%s): %s", s.path, b.line, b.cmdLine, b.expect, where, got)
		}
	}
	return results
}

func expectMatches(expect, got string) bool {
	if re, ok := strings.CutPrefix(expect, "~"); ok {
		return regexp.MustCompile("^(?:" + re + ")$").MatchString(got)
	}
	return expect == got
}

// scanAll runs SCAN from cursor 0 to cursor 0 with opts and formats the
// sorted unique keys it returned (or the first error).
func scanAll(t *testing.T, c *rawConn, opts []string) string {
	t.Helper()
	seen := map[string]bool{}
	cursor := "0"
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatalf("scanall %q: no end after %d calls", opts, i)
		}
		v := c.do(append([]string{"SCAN", cursor}, opts...)...)
		if v.Type == '-' {
			return formatReply(v)
		}
		if v.Type != '*' || len(v.Elems) != 2 || v.Elems[0].Type != '$' || v.Elems[1].Type != '*' {
			return "(bad SCAN reply) " + formatReply(v)
		}
		for _, k := range v.Elems[1].Elems {
			seen[string(k.Str)] = true
		}
		cursor = string(v.Elems[0].Str)
		if cursor == "0" {
			break
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteString("[")
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Quote(k))
	}
	sb.WriteString("]")
	return sb.String()
}

// rewriteGolden replaces the expectations of s with results; a ~regexp that
// still matches is kept.
func rewriteGolden(t *testing.T, s *goldenScript, results []goldenResult) {
	t.Helper()
	lines := slices.Clone(s.lines)
	changed := 0
	for _, r := range results {
		if r.b.expect == r.got || (strings.HasPrefix(r.b.expect, "~") && expectMatches(r.b.expect, r.got)) {
			continue
		}
		lines[r.b.expectIdx] = r.got
		changed++
	}
	if changed == 0 {
		return
	}
	if err := os.WriteFile(s.path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %d expectations in %s", changed, s.path)
}

func TestGolden(t *testing.T) {
	scripts := loadGoldenScripts(t)
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		for _, shards := range []int{1, 4} {
			rewrite := *goldenRewrite && st == shard.RunToCompletion && shards == 4
			t.Run(fmt.Sprintf("%s/shards=%d", st, shards), func(t *testing.T) {
				if !*goldenRewrite {
					t.Parallel()
				}
				ts := startServer(t, withStrategy(st), withShards(shards))
				tg := goldenTarget{addr: ts.Addr, rt: ts.RT}
				for _, s := range scripts {
					t.Run(s.name, func(t *testing.T) {
						results := runGoldenScript(t, tg, s)
						if rewrite {
							rewriteGolden(t, s, results)
						}
					})
				}
			})
		}
	}
}

func TestGoldenAgainstRedis(t *testing.T) {
	addr := redistest.Start(t)
	for _, s := range loadGoldenScripts(t) {
		t.Run(s.name, func(t *testing.T) {
			results := runGoldenScript(t, goldenTarget{addr: addr, redis: true}, s)
			if *goldenRewriteFromRedis {
				rewriteGolden(t, s, results)
			}
		})
	}
}

func TestGoldenSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`set a b`, []string{"set", "a", "b"}, false},
		{`  set  "a b"  'c d' `, []string{"set", "a b", "c d"}, false},
		{`"\x41\n\"\\" '\'x\n'`, []string{"A\n\"\\", `'x\n`}, false},
		{`a"b c"d`, nil, true},
		{`a"b c" d`, []string{"ab c", "d"}, false},
		{`""`, []string{""}, false},
		{`"abc`, nil, true},
		{`'abc`, nil, true},
		{`"\xZZ"`, []string{"xZZ"}, false},
	} {
		got, err := splitArgs(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
