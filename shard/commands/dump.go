package commands

import (
	"errors"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/rdb"
)

// DUMP and RESTORE, as Redis 7.0's dumpCommand and restoreCommand
// (src/cluster.c). The payload is the value's RDB type byte and encoding,
// the 2-byte RDB version and the CRC64 of both (package rdb): svcdb writes
// the encodings its snapshots write (plain lists, sets and hashes, ZSET_2,
// STREAM_LISTPACKS_2), which redis-server 7.0 restores, and restores every
// encoding Redis 7.0 writes or loads (ziplists, listpacks, intsets,
// quicklists ...). Every payload is validated in full, as Redis does under
// sanitize-dump-payload yes: a corrupt one is refused with "Bad data
// format", never half-restored.

var argABSTTL = []byte("ABSTTL")

// cmdDump replies with key's payload, or a null for a missing key.
func cmdDump(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		c.Null()
		return
	}
	// The payload is encoded in place at the end of c.Out, then its bulk
	// header (whose length is known only now) is slid in before it.
	start := len(c.Out)
	c.Out = d.DumpEncoder().AppendDumpPayload(c.Out, o)
	var hdr [24]byte
	h := append(hdr[:0], '$')
	h = strconv.AppendInt(h, int64(len(c.Out)-start), 10)
	h = append(h, '\r', '\n')
	c.Out = slices.Insert(c.Out, start, h...)
	c.Out = append(c.Out, '\r', '\n')
}

// restoreArgs are RESTORE's options after the payload.
type restoreArgs struct {
	replace, absTTL  bool
	lfuFreq, lruIdle int64 // -1: not given
}

// parseRestoreArgs parses RESTORE's options as restoreCommand does, in its
// order: IDLETIME and FREQ exclude each other (the second is a syntax
// error), their values are checked as they come. It replies and returns
// false on an error.
func parseRestoreArgs(c *keyspace.Ctx) (restoreArgs, bool) {
	a := restoreArgs{lfuFreq: -1, lruIdle: -1}
	for j := 4; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch arg := c.Args[j]; {
		case resp.EqualFold(arg, "replace"):
			a.replace = true
		case resp.EqualFold(arg, "absttl"):
			a.absTTL = true
		case resp.EqualFold(arg, "idletime") && more >= 1 && a.lfuFreq == -1:
			n, ok := resp.ParseInt(c.Args[j+1])
			if !ok {
				c.NotInteger()
				return a, false
			}
			if n < 0 {
				c.Err("ERR Invalid IDLETIME value, must be >= 0")
				return a, false
			}
			a.lruIdle = n
			j++
		case resp.EqualFold(arg, "freq") && more >= 1 && a.lruIdle == -1:
			n, ok := resp.ParseInt(c.Args[j+1])
			if !ok {
				c.NotInteger()
				return a, false
			}
			if n < 0 || n > 255 {
				c.Err("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return a, false
			}
			a.lfuFreq = n
			j++
		default:
			c.SyntaxErr()
			return a, false
		}
	}
	return a, true
}

// cmdRestore creates key from a DUMP payload. Checks come in Redis' order:
// options, BUSYKEY, the TTL, the payload's footer, then its value; the old
// key goes (REPLACE) only once the new value is built.
func cmdRestore(c *keyspace.Ctx) {
	key := c.Args[1]
	a, ok := parseRestoreArgs(c)
	if !ok {
		return
	}
	d := c.DBFor(key)
	old := d.Lookup(key, c.Now)
	if old != nil && !a.replace {
		c.Err("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	if ttl < 0 {
		c.Err("ERR Invalid TTL value, must be >= 0")
		return
	}
	payload := c.Args[3]
	if rdb.VerifyDumpPayload(payload) != nil {
		c.Err("ERR " + rdb.ErrPayload.Error())
		return
	}
	e, err := rdb.ParseDumpValue(payload)
	if err != nil {
		c.Err("ERR " + rdb.ErrBadDataFormat.Error())
		return
	}
	rv, err := keyspace.BuildRestoreValue(e, c.Limits())
	if err != nil {
		if !errors.Is(err, rdb.ErrBadDataFormat) {
			err = rdb.ErrBadDataFormat
		}
		c.Err("ERR " + err.Error())
		return
	}
	deleted := false
	if old != nil { // REPLACE
		d.Remove(old)
		deleted = true
	}
	if ttl != 0 && !a.absTTL {
		ttl += c.Now
	}
	if ttl != 0 && ttl <= c.Now && !d.Loading() {
		// Already expired (checkAlreadyExpired): the key is not created;
		// a replaced one is gone, logged as a DEL.
		if deleted {
			c.NotifyIn(c.DB, keyspace.NotifyGeneric, "del", key)
			c.LogAs(cmdDEL, key)
		}
		c.OK()
		return
	}
	o := d.InsertRestored(key, rv)
	if ttl != 0 {
		d.SetExpire(o, ttl)
		if !a.absTTL {
			// Logged with the absolute time, as Redis propagates it.
			args := make([][]byte, 0, len(c.Args)+1)
			args = append(args, c.Args...)
			args[2] = strconv.AppendInt(nil, ttl, 10)
			c.LogAs(append(args, argABSTTL)...)
		}
	}
	d.SetAccessHint(o, a.lfuFreq, a.lruIdle)
	c.Notify(keyspace.NotifyGeneric, "restore", key)
	c.OK()
}
