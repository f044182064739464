package commands

import (
	"github.com/svcdb/svcdb/shard/commands/hll"
	"github.com/svcdb/svcdb/shard/commands/sort"
	"github.com/svcdb/svcdb/shard/commands/streams"
	"github.com/svcdb/svcdb/shard/commands/zsets"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Handlers is the handler table of every command the shards execute, by
// command name as in the command table, each with how it routes: the
// families of this package (keys, strings, bitmaps, hashes, lists, sets)
// and those of shard/commands/zsets (with geo), shard/commands/streams,
// shard/commands/hll and shard/commands/sort. The runtime
// hands it to keyspace.NewEnv, which resolves it to command IDs once.
func Handlers() keyspace.Handlers {
	hs := keyspace.Handlers{}
	add := hs.Add
	// strings
	add("get", cmdGet, keyspace.RouteKeys)
	add("set", cmdSet, keyspace.RouteKeys)
	add("setnx", cmdSetNX, keyspace.RouteKeys)
	add("setex", cmdSetEX, keyspace.RouteKeys)
	add("psetex", cmdPSetEX, keyspace.RouteKeys)
	add("getset", cmdGetSet, keyspace.RouteKeys)
	add("getdel", cmdGetDel, keyspace.RouteKeys)
	add("getex", cmdGetEx, keyspace.RouteKeys)
	add("mget", cmdMGet, keyspace.RouteKeys)
	add("mset", cmdMSet, keyspace.RouteKeys)
	add("msetnx", cmdMSetNX, keyspace.RouteKeys)
	add("incr", cmdIncr, keyspace.RouteKeys)
	add("decr", cmdDecr, keyspace.RouteKeys)
	add("incrby", cmdIncrBy, keyspace.RouteKeys)
	add("decrby", cmdDecrBy, keyspace.RouteKeys)
	add("incrbyfloat", cmdIncrByFloat, keyspace.RouteKeys)
	add("append", cmdAppend, keyspace.RouteKeys)
	add("strlen", cmdStrlen, keyspace.RouteKeys)
	add("getrange", cmdGetRange, keyspace.RouteKeys)
	add("substr", cmdGetRange, keyspace.RouteKeys)
	add("setrange", cmdSetRange, keyspace.RouteKeys)
	add("lcs", cmdLCS, keyspace.RouteKeys) // lcs.go
	// generic
	add("del", cmdDel, keyspace.RouteKeys)
	add("unlink", cmdDel, keyspace.RouteKeys)
	add("exists", cmdExists, keyspace.RouteKeys)
	add("touch", cmdTouch, keyspace.RouteKeys)
	add("type", cmdType, keyspace.RouteKeys)
	add("rename", cmdRename, keyspace.RouteKeys)
	add("renamenx", cmdRenameNX, keyspace.RouteKeys)
	add("copy", cmdCopy, keyspace.RouteKeys)
	add("expire", cmdExpire, keyspace.RouteKeys)
	add("pexpire", cmdPExpire, keyspace.RouteKeys)
	add("expireat", cmdExpireAt, keyspace.RouteKeys)
	add("pexpireat", cmdPExpireAt, keyspace.RouteKeys)
	add("ttl", cmdTTL, keyspace.RouteKeys)
	add("pttl", cmdPTTL, keyspace.RouteKeys)
	add("expiretime", cmdExpireTime, keyspace.RouteKeys)
	add("pexpiretime", cmdPExpireTime, keyspace.RouteKeys)
	add("persist", cmdPersist, keyspace.RouteKeys)
	add("keys", cmdKeys, keyspace.RouteAll)
	add("scan", cmdScan, keyspace.RouteScan)
	add("randomkey", cmdRandomKey, keyspace.RouteAll)
	add("dbsize", cmdDBSize, keyspace.RouteAll)
	add("flushdb", cmdFlushDB, keyspace.RouteAll)
	add("flushall", cmdFlushAll, keyspace.RouteAll)
	add("move", cmdMove, keyspace.RouteKeys)                         // dbs.go
	add("swapdb", cmdSwapDB, keyspace.RouteAll)                      // dbs.go: every shard held
	add("dump", cmdDump, keyspace.RouteKeys)                         // dump.go
	add("restore", cmdRestore, keyspace.RouteKeys)                   // dump.go
	add("migrate", newMigrateCache().cmdMigrate, keyspace.RouteKeys) // migrate.go: its keys' shards held during the transfer
	add("object", keyspace.ObjectCommand, keyspace.RouteSubKey)      // the keyspace serves OBJECT and MEMORY USAGE
	add("memory", keyspace.MemoryUsageCommand, keyspace.RouteKeyedSub)
	// data types (one file per type registers its commands)
	addHashCommands(add)
	addListCommands(add)
	addSetCommands(add)
	zsets.Register(add)
	streams.Register(add)
	addBitmapCommands(add)
	hll.Register(add)
	sort.Register(add)
	return hs
}
