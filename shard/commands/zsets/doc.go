// Package zsets holds the sorted-set command handlers (ZADD, ZRANGE and its
// forms, ZUNION/ZINTER/ZDIFF and their STORE forms, ZPOP and the blocking
// BZPOP/BZMPOP, ZRANDMEMBER, ZSCAN ...), registered in the handler table by
// Register (called from shard/commands.Handlers). The encodings and their
// switch (listpack or skiplist) are the keyspace's (keyspace/zsetvalue.go)
// and the leaf values'.
//
// It must never import package shard (the runtime) or another commands
// package, hold an object past the handler, or allocate per command on the
// hot paths (ZADD, ZSCORE, ZRANGE on small sets).
package zsets
