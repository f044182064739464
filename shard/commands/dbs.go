package commands

import (
	"math"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// MOVE and SWAPDB: commands between two databases, as Redis 7.0's
// moveCommand and swapdbCommand (src/db.c).

// parseDBIndex is Redis' getIntFromObjectOrReply for a database number,
// with msg (when not empty) replacing both of its errors, then the range
// check of selectDb. It replies and returns false on an error.
func parseDBIndex(c *keyspace.Ctx, arg []byte, msg string) (int, bool) {
	n, ok := resp.ParseInt(arg)
	switch {
	case !ok && msg != "":
		c.Err("ERR " + msg)
		return 0, false
	case !ok:
		c.NotInteger()
		return 0, false
	case n < math.MinInt32 || n > math.MaxInt32:
		if msg != "" {
			c.Err("ERR " + msg)
		} else {
			c.Err("ERR value is out of range, value must between -2147483648 and 2147483647")
		}
		return 0, false
	case n < 0 || n >= keyspace.NumDatabases:
		c.Err("ERR DB index is out of range")
		return 0, false
	}
	return int(n), true
}

// cmdMove moves a key to another database. A key and its copy in another
// database hash to the same shard, so MOVE runs on one shard.
func cmdMove(c *keyspace.Ctx) {
	key := c.Args[1]
	dst, ok := parseDBIndex(c, c.Args[2], "")
	if !ok {
		return
	}
	if dst == c.DB {
		c.Err("ERR source and destination objects are the same")
		return
	}
	sd := c.DBFor(key)
	saved := c.DB
	c.DB = dst
	dd := c.DBFor(key)
	c.DB = saved
	o := sd.Lookup(key, c.Now)
	if o == nil || dd.Lookup(key, c.Now) != nil {
		c.Int(0)
		return
	}
	// The object moves as RENAME moves it (keys.go), its LRU/LFU data too.
	var val keyspace.Object
	kind, at, access := o.Kind, sd.ExpireAt(o), o.Access
	size := o.ValueMemory()
	offHeap := sd.DisownOffHeap(o)
	keyspace.MoveValue(&val, o)
	sd.AddMemory(-size)
	sd.Remove(o)
	n := dd.Insert(key, kind)
	keyspace.MoveValue(n, &val)
	n.Access = access
	if offHeap {
		dd.AdoptOffHeap(n, n.Bytes())
	}
	dd.AddMemory(n.ValueMemory()) // not size: a value that shared its key's allocation moved as a copy
	dd.SetExpire(n, at)
	c.NotifyIn(saved, keyspace.NotifyGeneric, "move_from", key)
	c.NotifyIn(dst, keyspace.NotifyGeneric, "move_to", key)
	c.Int(1)
}

// cmdSwapDB swaps two databases. It routes to every shard (RouteAll) and
// swaps the two databases of each store while holding them all, so no
// client sees one shard swapped and another not. Blocked clients and
// WATCHes stay with their database number, as in Redis (Store.SwapDBs).
func cmdSwapDB(c *keyspace.Ctx) {
	a, ok := parseDBIndex(c, c.Args[1], "invalid first DB index")
	if !ok {
		return
	}
	b, ok := parseDBIndex(c, c.Args[2], "invalid second DB index")
	if !ok {
		return
	}
	for i, st := range c.StoresHeld() {
		st.SwapDBs(a, b)
		if i == 0 {
			st.DBs()[a].CountChange() // Redis' server.dirty++: one change
		}
	}
	c.OK()
}
