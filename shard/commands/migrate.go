package commands

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// MIGRATE, as Redis 7.0's migrateCommand (src/cluster.c): the keys are
// DUMPed, sent to the target as RESTORE commands (with AUTH and SELECT
// before them when needed) in one write, and, unless COPY, deleted here
// once the target acknowledged each, the change logged as a DEL of those
// keys.
//
// Like Redis, MIGRATE is synchronous: its handler runs holding its keys'
// shards and does its network I/O there, bounded by the timeout argument
// for the connect and for each read and write. So the keys cannot change
// between being read and being deleted, as in Redis, where MIGRATE blocks
// the whole server; here it blocks the shards of its keys (and, under
// run-to-completion, the loop executing them) for as long as the target
// takes. MIGRATE to the very server running it therefore times out, as in
// Redis.

// Redis' migrate socket cache limits (cluster.c).
const (
	migrateCacheItems = 64               // MIGRATE_SOCKET_CACHE_ITEMS
	migrateCacheIdle  = 10 * time.Second // MIGRATE_SOCKET_CACHE_TTL
)

// migrateConn is one cached connection to a target (Redis'
// migrateCachedSocket): lastDB is the database last SELECTed on it, -1
// when unknown.
type migrateConn struct {
	conn   net.Conn
	rd     *bufio.Reader
	lastDB int64
	// idle closes the connection after migrateCacheIdle in the cache.
	idle *time.Timer
}

// migrateCache holds the connections MIGRATE keeps open, by "host:port",
// as Redis' server.migrate_cached_sockets: at most migrateCacheItems,
// each closed after migrateCacheIdle unused. A connection is taken out of
// the cache while a MIGRATE uses it, so two shards migrating to the same
// target at once each get their own. Safe for concurrent use.
type migrateCache struct {
	mu    sync.Mutex
	conns map[string]*migrateConn
}

func newMigrateCache() *migrateCache {
	return &migrateCache{conns: map[string]*migrateConn{}}
}

// get returns the cached connection to addr, taken out of the cache, or
// dials a new one within timeout.
func (mc *migrateCache) get(addr string, timeout time.Duration) (*migrateConn, error) {
	mc.mu.Lock()
	if c := mc.conns[addr]; c != nil {
		delete(mc.conns, addr)
		mc.mu.Unlock()
		if c.idle.Stop() {
			return c, nil
		}
		// The idle timer fired and is closing it: dial afresh.
	} else {
		mc.mu.Unlock()
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &migrateConn{conn: conn, rd: bufio.NewReaderSize(conn, 1024), lastDB: -1}, nil
}

// put returns c to the cache after a successful use; a connection already
// cached for addr (another shard's) wins and c is closed.
func (mc *migrateCache) put(addr string, c *migrateConn) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.conns[addr] != nil {
		c.conn.Close()
		return
	}
	if len(mc.conns) >= migrateCacheItems {
		// Too many items: drop one at random, as migrateGetSocket does.
		i := rand.IntN(len(mc.conns))
		for k, old := range mc.conns {
			if i == 0 {
				old.idle.Stop()
				old.conn.Close()
				delete(mc.conns, k)
				break
			}
			i--
		}
	}
	mc.conns[addr] = c
	c.idle = time.AfterFunc(migrateCacheIdle, func() {
		mc.mu.Lock()
		if mc.conns[addr] == c {
			delete(mc.conns, addr)
		}
		mc.mu.Unlock()
		c.conn.Close()
	})
}

// migrateArgs are MIGRATE's parsed arguments.
type migrateArgs struct {
	addr               string
	db                 int64
	timeout            time.Duration
	copy, replace      bool
	username, password []byte
	auth               bool
	keys               [][]byte
}

// parseMigrateArgs parses MIGRATE's arguments as migrateCommand does, in
// its order (options first, then the timeout and the database). It
// replies and returns false on an error.
func parseMigrateArgs(c *keyspace.Ctx) (migrateArgs, bool) {
	a := migrateArgs{keys: c.Args[3:4]}
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch arg := c.Args[j]; {
		case resp.EqualFold(arg, "copy"):
			a.copy = true
		case resp.EqualFold(arg, "replace"):
			a.replace = true
		case resp.EqualFold(arg, "auth"):
			if more < 1 {
				c.SyntaxErr()
				return a, false
			}
			j++
			a.auth, a.password = true, c.Args[j]
		case resp.EqualFold(arg, "auth2"):
			if more < 2 {
				c.SyntaxErr()
				return a, false
			}
			a.auth, a.username, a.password = true, c.Args[j+1], c.Args[j+2]
			j += 2
		case resp.EqualFold(arg, "keys"):
			if len(c.Args[3]) != 0 {
				c.Err("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return a, false
			}
			a.keys = c.Args[j+1:]
			j = len(c.Args) // all the remaining arguments are keys
		default:
			c.SyntaxErr()
			return a, false
		}
	}
	timeout, ok := resp.ParseInt(c.Args[5])
	if !ok {
		c.NotInteger()
		return a, false
	}
	if a.db, ok = resp.ParseInt(c.Args[4]); !ok {
		c.NotInteger()
		return a, false
	}
	if timeout <= 0 {
		timeout = 1000
	}
	a.timeout = time.Duration(min(timeout, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
	a.addr = net.JoinHostPort(string(c.Args[1]), string(c.Args[2]))
	return a, true
}

// cmdMigrate is MIGRATE; mc is the runtime's connection cache.
func (mc *migrateCache) cmdMigrate(c *keyspace.Ctx) {
	a, ok := parseMigrateArgs(c)
	if !ok {
		return
	}
	var keys [][]byte
	var objs []*keyspace.Object
	for _, k := range a.keys {
		if o := c.DBFor(k).Lookup(k, c.Now); o != nil {
			keys, objs = append(keys, k), append(objs, o)
		}
	}
	if len(keys) == 0 {
		c.Simple("NOKEY")
		return
	}
	for retry := true; ; retry = false {
		failed, retryable := mc.migrateOnce(c, &a, keys, objs)
		switch {
		case failed == "":
			return // replied
		case !retry || !retryable:
			c.Err("IOERR error or timeout " + failed + " to target instance")
			return
		}
	}
}

// migrateOnce is one attempt of MIGRATE (Redis' try_again). It replies
// and returns "" unless the connection failed before the target processed
// anything; it then returns "writing" or "reading" (for the IOERR reply)
// and whether a second attempt on a fresh connection may follow (never
// after a timeout).
func (mc *migrateCache) migrateOnce(c *keyspace.Ctx, a *migrateArgs, keys [][]byte, objs []*keyspace.Object) (failed string, retryable bool) {
	cs, err := mc.get(a.addr, a.timeout)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.Err("IOERR error or timeout connecting to the client")
			return "", false
		}
		// Redis connects without blocking and learns of a refused
		// connection only when it writes: it reports (and retries) that.
		return "writing", true
	}
	var cmd []byte
	if a.auth {
		if a.username != nil {
			cmd = resp.AppendArrayHeader(cmd, 3)
			cmd = resp.AppendBulkString(cmd, "AUTH")
			cmd = resp.AppendBulk(cmd, a.username)
		} else {
			cmd = resp.AppendArrayHeader(cmd, 2)
			cmd = resp.AppendBulkString(cmd, "AUTH")
		}
		cmd = resp.AppendBulk(cmd, a.password)
	}
	sel := cs.lastDB != a.db
	if sel {
		cmd = resp.AppendArrayHeader(cmd, 2)
		cmd = resp.AppendBulkString(cmd, "SELECT")
		cmd = resp.AppendBulk(cmd, strconv.AppendInt(nil, a.db, 10))
	}
	sent := keys[:0:0]
	var payload []byte
	for i, k := range keys {
		o := objs[i]
		var ttl int64
		if o.HasExpire() {
			if ttl = c.DBFor(k).ExpireAt(o) - c.Now; ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		sent = append(sent, k)
		n := 4
		if a.replace {
			n = 5
		}
		cmd = resp.AppendArrayHeader(cmd, n)
		cmd = resp.AppendBulkString(cmd, "RESTORE")
		cmd = resp.AppendBulk(cmd, k)
		cmd = resp.AppendBulk(cmd, strconv.AppendInt(c.Scratch[:0], ttl, 10))
		payload = c.DBFor(k).DumpEncoder().AppendDumpPayload(payload[:0], o)
		cmd = resp.AppendBulk(cmd, payload)
		if a.replace {
			cmd = resp.AppendBulkString(cmd, "REPLACE")
		}
	}
	deadline := func() { cs.conn.SetDeadline(time.Now().Add(a.timeout)) } //nolint:errcheck // a failed SetDeadline shows as the I/O error that follows
	for pos := 0; pos < len(cmd); {
		deadline()
		n, err := cs.conn.Write(cmd[pos:min(len(cmd), pos+64<<10)])
		if err != nil {
			cs.conn.Close() // migrateCloseSocket: never cached again
			return "writing", !errors.Is(err, os.ErrDeadlineExceeded)
		}
		pos += n
	}
	readLine := func() (string, error) {
		deadline()
		line, err := cs.rd.ReadString('\n')
		if err != nil {
			return "", err
		}
		return line[:len(line)-min(len(line), 2)], nil
	}
	var authReply, selReply string
	if a.auth {
		if authReply, err = readLine(); err != nil {
			cs.conn.Close()
			return "reading", !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
	if sel {
		if selReply, err = readLine(); err != nil {
			cs.conn.Close()
			return "reading", !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
	targetErr := ""
	var deleted [][]byte
	socketErr := false
	for j, k := range sent {
		line, err := readLine()
		if err != nil {
			if j == 0 && !errors.Is(err, os.ErrDeadlineExceeded) {
				cs.conn.Close()
				return "reading", true // nothing processed: retry on a fresh connection
			}
			socketErr = true
			break
		}
		switch {
		case a.auth && len(authReply) > 0 && authReply[0] == '-':
			line = authReply
		case sel && len(selReply) > 0 && selReply[0] == '-':
			line = selReply
		}
		if len(line) > 0 && line[0] == '-' {
			if targetErr == "" {
				targetErr = line[1:]
				cs.lastDB = -1
			}
			continue
		}
		if !a.copy {
			d := c.DBFor(k)
			if o := d.Peek(k, c.Now); o != nil {
				d.Remove(o)
				c.Notify(keyspace.NotifyGeneric, "del", k)
				deleted = append(deleted, k)
			}
		}
	}
	if len(deleted) > 0 {
		c.LogAs(append([][]byte{cmdDEL}, deleted...)...)
	}
	switch {
	case targetErr != "":
		c.Err("ERR Target instance replied with error: " + targetErr)
		if socketErr {
			cs.conn.Close()
		} else {
			mc.put(a.addr, cs)
		}
	case socketErr:
		cs.conn.Close()
		c.Err("IOERR error or timeout reading to target instance")
	default:
		cs.lastDB = a.db
		mc.put(a.addr, cs)
		c.OK()
	}
	return "", false
}
