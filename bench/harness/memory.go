package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
	"github.com/svcdb/svcdb/core/resp"
)

// MemoryShape is a kind of key the memory comparison loads: one command
// creates one key.
type MemoryShape struct {
	Name string
	// Command is the command that creates a key, as reports show it.
	Command string
	// Expect is the reply each command must get ("+OK", ":3").
	Expect string
	// appendCmd appends the RESP command that creates key i.
	appendCmd func(dst []byte, i int) []byte
}

// MemoryShapes are the shapes svcbench memory knows, each small enough to
// stay in Redis' compact encodings (listpack for 3 fields or members of 10
// bytes): the per-key overhead the data types add is what they measure.
// Keys are "key:<i>"; 10-byte values are a letter and 9 digits, so that
// neither server stores them as integers.
var MemoryShapes = []MemoryShape{
	{
		Name: "string", Command: "SET key:<i> <32-byte value>", Expect: "+OK",
		appendCmd: func(b []byte, i int) []byte {
			b = resp.AppendArrayHeader(b, 3)
			b = resp.AppendBulkString(b, "SET")
			b = appendKey(b, i)
			return appendValue(b, 'v', 31, i)
		},
	},
	{
		Name: "hash", Command: "HSET key:<i> f1 <10 bytes> f2 <10 bytes> f3 <10 bytes>", Expect: ":3",
		appendCmd: threeMembers("HSET", func(k int) string { return "f" + strconv.Itoa(k) }),
	},
	{
		Name: "set", Command: "SADD key:<i> <10 bytes> <10 bytes> <10 bytes>", Expect: ":3",
		appendCmd: threeMembers("SADD", nil),
	},
	{
		Name: "zset", Command: "ZADD key:<i> 1 <10 bytes> 2 <10 bytes> 3 <10 bytes>", Expect: ":3",
		appendCmd: threeMembers("ZADD", strconv.Itoa),
	},
	{
		Name: "list", Command: "RPUSH key:<i> <10 bytes> <10 bytes> <10 bytes>", Expect: ":3",
		appendCmd: threeMembers("RPUSH", nil),
	},
}

// MemoryShapeNames returns the names of MemoryShapes.
func MemoryShapeNames() []string {
	out := make([]string, len(MemoryShapes))
	for i, s := range MemoryShapes {
		out[i] = s.Name
	}
	return out
}

// lookupShape finds a shape by its entry in MemoryConfig.Shapes: a name,
// or name@N for N keys instead of MemoryConfig.Keys (keys 0).
func lookupShape(entry string) (shape MemoryShape, keys int, ok bool) {
	name, n, hasKeys := strings.Cut(entry, "@")
	if hasKeys {
		var err error
		if keys, err = strconv.Atoi(n); err != nil || keys < 1 {
			return MemoryShape{}, 0, false
		}
	}
	i := slices.IndexFunc(MemoryShapes, func(s MemoryShape) bool { return s.Name == name })
	if i < 0 {
		return MemoryShape{}, 0, false
	}
	return MemoryShapes[i], keys, true
}

// LargeStringShape is the string shape at 10,000,000 keys, the row issue 20
// asks of make bench-memory besides every shape at Keys.
const LargeStringShape = "string@10000000"

// threeMembers returns the appendCmd of "cmd key:<i> m1 m2 m3": the members
// are 10-byte values 'a', 'b', 'c' then i in 9 digits, each after before(k)
// (k = 1, 2, 3: a field or a score) unless before is nil.
func threeMembers(cmd string, before func(k int) string) func(dst []byte, i int) []byte {
	args := 2 + 3
	if before != nil {
		args += 3
	}
	return func(b []byte, i int) []byte {
		b = resp.AppendArrayHeader(b, args)
		b = resp.AppendBulkString(b, cmd)
		b = appendKey(b, i)
		for j := range 3 {
			if before != nil {
				b = resp.AppendBulkString(b, before(j+1))
			}
			b = appendValue(b, byte('a'+j), 9, i)
		}
		return b
	}
}

// appendKey appends the bulk string "key:<i>".
func appendKey(b []byte, i int) []byte {
	var key [24]byte
	return resp.AppendBulk(b, strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10))
}

// appendValue appends a bulk string of 1+digits bytes: letter, then i
// zero-padded to digits (its last digits if longer).
func appendValue(b []byte, letter byte, digits, i int) []byte {
	var num [20]byte
	d := strconv.AppendInt(num[:0], int64(i), 10)
	if len(d) > digits {
		d = d[len(d)-digits:]
	}
	var v [40]byte
	w := append(v[:0], letter)
	for range digits - len(d) {
		w = append(w, '0')
	}
	return resp.AppendBulk(b, append(w, d...))
}

// MemoryConfig is one memory comparison. DefaultMemoryConfig fills
// everything except SvcDB.
type MemoryConfig struct {
	// SvcDB and Redis are started as for Config (fresh for every shape).
	SvcDB, Redis Server
	// Pin, ServerCPUs and ClientCPUs mean what they mean in Bench: the
	// servers on ServerCPUs, this process (the loader) on ClientCPUs.
	Pin                    bool
	ServerCPUs, ClientCPUs string
	// Shapes are MemoryShapes' names to measure, in order, each as name
	// (Keys keys) or name@N (N keys). Default all, then LargeStringShape.
	Shapes []string
	// Keys is how many keys of each shape are loaded. Default 1,000,000.
	Keys int
	// Connections and Pipeline: the loader's connections, each with up to
	// Pipeline commands in flight. Defaults 4 and 256.
	Connections, Pipeline int
	// Settle is how long to wait after loading before the second reading.
	// svcdb is a Go program: its RSS holds garbage until a collection and
	// freed memory until the runtime returns it; Go forces a collection
	// every 2 minutes, so 2m10s measures after one. Default 1 s.
	Settle time.Duration
	// Timeout bounds the loading of one shape into one server. Default 5
	// minutes.
	Timeout time.Duration

	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' working directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// DefaultMemoryConfig returns the defaults described on each field.
func DefaultMemoryConfig() MemoryConfig {
	return MemoryConfig{
		Redis:       Server{Path: "/usr/bin/redis-server", Args: slices.Clone(RedisBaselineArgs)},
		Pin:         true,
		ServerCPUs:  "0",
		ClientCPUs:  "1",
		Shapes:      append(MemoryShapeNames(), LargeStringShape),
		Keys:        1_000_000,
		Connections: 4,
		Pipeline:    256,
		Settle:      time.Second,
		Timeout:     5 * time.Minute,
	}
}

// Validate checks c and returns every problem found.
func (c *MemoryConfig) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" || c.Redis.Path == "" {
		errs = append(errs, errors.New("both servers need a path"))
	}
	if len(c.Shapes) == 0 {
		errs = append(errs, errors.New("no shapes"))
	}
	for _, s := range c.Shapes {
		if _, _, ok := lookupShape(s); !ok {
			errs = append(errs, fmt.Errorf("shape %q: want one of %s, or one of them @N keys (string@10000000)", s, strings.Join(MemoryShapeNames(), ", ")))
		}
	}
	if c.Keys < 1 || c.Connections < 1 || c.Pipeline < 1 {
		errs = append(errs, fmt.Errorf("keys %d, connections %d, pipeline %d: want >= 1 each", c.Keys, c.Connections, c.Pipeline))
	}
	if c.Settle < 0 || c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("settle %v, timeout %v: want >= 0 and > 0", c.Settle, c.Timeout))
	}
	return errors.Join(errs...)
}

// MemorySide is what one server took for one shape: readings before and
// after loading the keys.
type MemorySide struct {
	// RSSBefore and RSSAfter are VmRSS from /proc/<pid>/status, bytes.
	RSSBefore int64 `json:"rss_before"`
	RSSAfter  int64 `json:"rss_after"`
	// UsedBefore and UsedAfter are INFO memory used_memory: Redis'
	// allocator's count; svcdb's own estimate of its keys and values.
	// HasUsed is false when the server does not report it.
	UsedBefore int64 `json:"used_memory_before"`
	UsedAfter  int64 `json:"used_memory_after"`
	HasUsed    bool  `json:"has_used_memory"`
	// HeapBefore and HeapAfter are INFO memory used_memory_heap, which
	// svcdb reports: the Go heap's objects, garbage not yet collected
	// included.
	HeapBefore int64 `json:"heap_before,omitempty"`
	HeapAfter  int64 `json:"heap_after,omitempty"`
	HasHeap    bool  `json:"has_heap,omitempty"`
	// Keys is DBSIZE after loading; LoadSec how long loading took.
	Keys    int64   `json:"keys"`
	LoadSec float64 `json:"load_sec"`
	// Failure says why the side has no figures.
	Failure string `json:"failure,omitempty"`
}

// perKey returns (after-before)/keys, 0 without keys.
func perKey(before, after int64, keys int) float64 {
	if keys <= 0 {
		return 0
	}
	return float64(after-before) / float64(keys)
}

// RSSPerKey is the RSS growth per key loaded, in bytes.
func (s MemorySide) RSSPerKey(keys int) float64 { return perKey(s.RSSBefore, s.RSSAfter, keys) }

// UsedPerKey is the used_memory growth per key loaded, in bytes.
func (s MemorySide) UsedPerKey(keys int) float64 { return perKey(s.UsedBefore, s.UsedAfter, keys) }

// HeapPerKey is the used_memory_heap growth per key loaded, in bytes.
func (s MemorySide) HeapPerKey(keys int) float64 { return perKey(s.HeapBefore, s.HeapAfter, keys) }

// MemoryResult is one shape on both servers.
type MemoryResult struct {
	Shape   string     `json:"shape"`
	Command string     `json:"command"`
	Keys    int        `json:"keys"`
	SvcDB   MemorySide `json:"svcdb"`
	Redis   MemorySide `json:"redis"`
}

// RSSRatio is svcdb's RSS per key over redis-server's, 0 if either side
// failed or grew by nothing.
func (m *MemoryResult) RSSRatio() float64 {
	if m.SvcDB.Failure != "" || m.Redis.Failure != "" {
		return 0
	}
	return ratio(m.SvcDB.RSSPerKey(m.Keys), m.Redis.RSSPerKey(m.Keys))
}

// UsedRatio is svcdb's RSS per key over redis-server's used_memory per key:
// what svcdb costs the machine against what Redis' allocator hands out.
func (m *MemoryResult) UsedRatio() float64 {
	if m.SvcDB.Failure != "" || m.Redis.Failure != "" || !m.Redis.HasUsed {
		return 0
	}
	return ratio(m.SvcDB.RSSPerKey(m.Keys), m.Redis.UsedPerKey(m.Keys))
}

// MemoryReport is the outcome of RunMemory.
type MemoryReport struct {
	Started     time.Time       `json:"started"`
	Elapsed     float64         `json:"elapsed_sec"`
	Machine     Machine         `json:"machine"`
	PinNote     string          `json:"pin_note"`
	SvcDBCmd    string          `json:"svcdb_cmd"`
	RedisCmd    string          `json:"redis_cmd"`
	Connections int             `json:"connections"`
	Pipeline    int             `json:"pipeline"`
	SettleSec   float64         `json:"settle_sec"`
	Results     []*MemoryResult `json:"results"`
}

// Failures lists the shapes a server could not load, one line each.
func (r *MemoryReport) Failures() []string {
	var out []string
	for _, m := range r.Results {
		for _, side := range []struct {
			name string
			s    MemorySide
		}{{SideSvcDB, m.SvcDB}, {SideRedis, m.Redis}} {
			if side.s.Failure != "" {
				out = append(out, fmt.Sprintf("%s on %s: %s", m.Shape, side.name, side.s.Failure))
			}
		}
	}
	return out
}

// RunMemory loads cfg.Keys keys of each shape into a fresh svcdb and a
// fresh redis-server and reads what each took. Every process it starts is
// stopped before it returns. A server that refuses a shape's command fails
// that shape on that server (MemorySide.Failure), not the comparison.
func RunMemory(ctx context.Context, cfg MemoryConfig) (rep *MemoryReport, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep = &MemoryReport{Started: time.Now(), Connections: cfg.Connections, Pipeline: cfg.Pipeline, SettleSec: cfg.Settle.Seconds()}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()
	serverCPUs, clientCPUs, note := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.PinNote = note
	rep.Machine = describeMachine(ctx, &Config{SvcDB: cfg.SvcDB, Redis: cfg.Redis})

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-memory-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}
	restore, err := pinSelf(clientCPUs)
	if err != nil {
		return rep, err
	}
	defer restore()

	for _, name := range cfg.Shapes {
		shape, keys, _ := lookupShape(name)
		if keys == 0 {
			keys = cfg.Keys
		}
		m := &MemoryResult{Shape: shape.Name, Command: shape.Command, Keys: keys}
		rep.Results = append(rep.Results, m)
		if err := memoryShape(ctx, &cfg, rep, m, shape, filepath.Join(workDir, strings.ReplaceAll(name, "@", "-")), serverCPUs, progress); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// memoryShape measures one shape on fresh servers, stopped before it
// returns.
func memoryShape(ctx context.Context, cfg *MemoryConfig, rep *MemoryReport, m *MemoryResult, shape MemoryShape, dir, serverCPUs string, progress io.Writer) (err error) {
	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()
	for _, side := range []struct {
		name string
		srv  Server
		out  *MemorySide
	}{{SideSvcDB, cfg.SvcDB, &m.SvcDB}, {SideRedis, cfg.Redis, &m.Redis}} {
		sdir := filepath.Join(dir, side.name)
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return err
		}
		s, err := proc.StartServer(ctx, &group, proc.ServerSpec{
			Name: side.name, Path: side.srv.Path, Args: side.srv.Args, CPUs: serverCPUs, Dir: sdir,
		}, 30*time.Second)
		if err != nil {
			return err
		}
		if side.name == SideSvcDB {
			rep.SvcDBCmd = s.CommandLine()
		} else {
			rep.RedisCmd = s.CommandLine()
		}
		if err := measureSide(ctx, cfg, s, shape, m.Keys, side.out); err != nil {
			return fmt.Errorf("%s, %s: %w", shape.Name, side.name, err)
		}
		if exited, werr := s.Exited(); exited {
			return fmt.Errorf("%s exited while loading %s: %v; output:\n%s", side.name, shape.Name, werr, s.Output())
		}
		o := side.out
		if o.Failure != "" {
			fmt.Fprintf(progress, "[memory] %-6s %-5s FAILED: %s\n", shape.Name, side.name, o.Failure)
			continue
		}
		used := ""
		if o.HasUsed {
			used = fmt.Sprintf(", used_memory %.1f B/key", o.UsedPerKey(m.Keys))
		}
		fmt.Fprintf(progress, "[memory] %-6s %-5s %d keys in %.2f s: RSS %.1f B/key%s\n",
			shape.Name, side.name, m.Keys, o.LoadSec, o.RSSPerKey(m.Keys), used)
	}
	return nil
}

// memReading is one reading of a server's memory.
type memReading struct {
	rss, used, heap  int64
	hasUsed, hasHeap bool
}

func readMemory(ctx context.Context, s *proc.Server) (memReading, error) {
	var r memReading
	var err error
	if r.rss, err = proc.ReadRSS(s.Pid()); err != nil {
		return r, err
	}
	mem, err := info(ctx, s.Addr, "memory")
	if err != nil {
		return r, err
	}
	r.used, r.hasUsed = infoInt(mem, "used_memory")
	r.heap, r.hasHeap = infoInt(mem, "used_memory_heap")
	return r, nil
}

// measureSide reads s's memory, loads the keys, waits Settle, and reads
// again. A refused command or a wrong key count ends up in out.Failure; an
// error means the measurement itself broke.
func measureSide(ctx context.Context, cfg *MemoryConfig, s *proc.Server, shape MemoryShape, keys int, out *MemorySide) error {
	before, err := readMemory(ctx, s)
	if err != nil {
		return err
	}
	lctx, cancel := context.WithTimeoutCause(ctx, cfg.Timeout, fmt.Errorf("loading %s: timeout %v", shape.Name, cfg.Timeout))
	start := time.Now()
	lerr := loadKeys(lctx, s.Addr, shape, keys, cfg.Connections, cfg.Pipeline)
	cancel()
	out.LoadSec = time.Since(start).Seconds()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if lerr != nil {
		var re errReply
		if errors.As(lerr, &re) {
			out.Failure = string(re)
			return nil
		}
		return lerr
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(cfg.Settle):
	}
	after, err := readMemory(ctx, s)
	if err != nil {
		return err
	}
	n, err := dbsize(ctx, s.Addr)
	if err != nil {
		return err
	}
	out.Keys = n
	out.RSSBefore, out.RSSAfter = before.rss, after.rss
	out.UsedBefore, out.UsedAfter, out.HasUsed = before.used, after.used, before.hasUsed && after.hasUsed
	out.HeapBefore, out.HeapAfter, out.HasHeap = before.heap, after.heap, before.hasHeap && after.hasHeap
	if out.Keys != int64(keys) {
		out.Failure = fmt.Sprintf("DBSIZE %d after loading %d keys", out.Keys, keys)
	}
	return nil
}

// loadKeys creates keys 0..keys-1 of shape on addr over conns connections
// (each a contiguous range of keys), pipeline commands in flight on each.
// Every reply must be shape.Expect; an error reply is returned as an
// errReply.
func loadKeys(ctx context.Context, addr string, shape MemoryShape, keys, conns, pipeline int) error {
	conns = min(conns, keys)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for c := range conns {
		lo, hi := keys*c/conns, keys*(c+1)/conns
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := loadRange(ctx, addr, shape, lo, hi, pipeline); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func loadRange(ctx context.Context, addr string, shape MemoryShape, lo, hi, pipeline int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r := bufio.NewReaderSize(conn, 64<<10)
	var buf []byte
	for i := lo; i < hi; {
		n := min(pipeline, hi-i)
		buf = buf[:0]
		for k := range n {
			buf = shape.appendCmd(buf, i+k)
		}
		if _, err := conn.Write(buf); err != nil {
			return loadErr(ctx, err)
		}
		for range n {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return loadErr(ctx, err)
			}
			got := strings.TrimSuffix(string(line), "\r\n")
			if got == shape.Expect {
				continue
			}
			if strings.HasPrefix(got, "-") {
				return errReply(got[1:])
			}
			return fmt.Errorf("%s: reply %q, want %q", strings.Fields(shape.Command)[0], got, shape.Expect)
		}
		i += n
	}
	return nil
}

// loadErr prefers the reason the context ended over the I/O error that
// closing the connection caused.
func loadErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

var memoryHeader = []string{
	"shape", "keys",
	"svcdb RSS B/key", "svcdb used_memory B/key", "svcdb heap B/key",
	"redis used_memory B/key", "redis RSS B/key",
	"RSS ratio", "svcdb RSS / redis used",
}

func (m *MemoryResult) cells() []string {
	num := func(ok bool, v float64) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.1f", v)
	}
	rat := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	s, q := m.SvcDB, m.Redis
	sok, qok := s.Failure == "", q.Failure == ""
	return []string{
		m.Shape, strconv.Itoa(m.Keys),
		num(sok, s.RSSPerKey(m.Keys)), num(sok && s.HasUsed, s.UsedPerKey(m.Keys)), num(sok && s.HasHeap, s.HeapPerKey(m.Keys)),
		num(qok && q.HasUsed, q.UsedPerKey(m.Keys)), num(qok, q.RSSPerKey(m.Keys)),
		rat(m.RSSRatio()), rat(m.UsedRatio()),
	}
}

const memoryLegend = "B/key: growth over the load divided by the keys loaded. RSS: VmRSS (/proc/<pid>/status), what the machine pays.\n" +
	"used_memory: INFO memory; redis-server's allocator count, svcdb's own estimate of its keys and values.\n" +
	"svcdb heap: INFO memory used_memory_heap, Go heap objects (garbage not yet collected included).\n" +
	"RSS ratio: svcdb RSS / redis RSS per key; svcdb RSS / redis used: against what Redis' allocator hands out. Lower is better for svcdb."

// WriteTable prints the memory comparison as an aligned text table.
func (r *MemoryReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("memory per key, svcdb vs redis-server (fresh servers per shape; %d connections, pipeline %d; read %.0f s after loading)\n",
		r.Connections, r.Pipeline, r.SettleSec)
	ew.printf("machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	ew.printf("svcdb:   %s\n", r.SvcDBCmd)
	ew.printf("redis:   %s\n\n", r.RedisCmd)
	if ew.err != nil {
		return ew.err
	}
	cells := make([][]string, len(r.Results))
	for i, m := range r.Results {
		cells[i] = m.cells()
	}
	if err := writeTable(w, memoryHeader, cells); err != nil {
		return err
	}
	ew.printf("%s\n", memoryLegend)
	for _, m := range r.Results {
		ew.printf("  %-6s %s\n", m.Shape, m.Command)
	}
	for _, f := range r.Failures() {
		ew.printf("FAILED %s\n", f)
	}
	return ew.err
}

// WriteMarkdown writes the memory comparison as a Markdown section.
func (r *MemoryReport) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## Memory per key\n\n")
	ew.printf("Measured %s with `svcbench memory`: fresh servers for each shape, %s loaded over %d connections (pipeline %d), read %.0f s after loading.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.keys(), r.Connections, r.Pipeline, r.SettleSec)
	ew.printf("- Machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	ew.printf("- svcdb: `%s`\n", r.SvcDBCmd)
	ew.printf("- redis: `%s`\n", r.RedisCmd)
	ew.printf("- %s\n\n", strings.ReplaceAll(memoryLegend, "\n", "\n- "))
	ew.printf("| %s |\n", strings.Join(memoryHeader, " | "))
	ew.printf("|---%s|\n", strings.Repeat("|--:", len(memoryHeader)-1))
	for _, m := range r.Results {
		ew.printf("| %s |\n", strings.Join(m.cells(), " | "))
	}
	ew.printf("\nShapes:\n\n")
	for _, m := range r.Results {
		ew.printf("- %s: `%s`\n", m.Shape, m.Command)
	}
	if f := r.Failures(); len(f) > 0 {
		ew.printf("\nFailed:\n\n")
		for _, l := range f {
			ew.printf("- %s\n", l)
		}
	}
	return ew.err
}

// keys says how many keys each shape had: one count, or "the keys of the
// table's keys column" when shapes differ (a name@N shape).
func (r *MemoryReport) keys() string {
	for _, m := range r.Results {
		if m.Keys != r.Results[0].Keys {
			return "the keys of the table's keys column"
		}
	}
	if len(r.Results) == 0 {
		return "0 keys"
	}
	return strconv.Itoa(r.Results[0].Keys) + " keys"
}

// WriteJSON writes the whole report, every reading included.
func (r *MemoryReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// checkFilled reports what is wrong with a fill that returned res into the
// server at addr: error replies, or a DBSIZE other than keys. verb names the
// step in the failure ("filling", "loading"). An empty failure and a nil
// error mean the server holds exactly keys keys; an error means DBSIZE
// itself could not be read.
func checkFilled(ctx context.Context, addr string, res *loadgen.Result, keys int, verb string) (failure string, err error) {
	if sum := res.Summary(); sum.Totals.Errors > 0 {
		return fmt.Sprintf("%s: %d error replies, first: %s", verb, sum.Totals.Errors, strings.Join(sum.ErrorSamples, "; ")), nil
	}
	n, err := dbsize(ctx, addr)
	if err != nil {
		return "", err
	}
	if n != int64(keys) {
		return fmt.Sprintf("DBSIZE %d after %s %d keys", n, verb, keys), nil
	}
	return "", nil
}

// dbsize asks the server at addr for DBSIZE on a connection of its own.
func dbsize(ctx context.Context, addr string) (int64, error) {
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	rp, err := c.do("DBSIZE")
	if err != nil {
		return 0, fmt.Errorf("DBSIZE: %w", err)
	}
	return rp.Int, nil
}
