package config

import (
	"math"
	"strconv"
	"strings"
)

// Bounds used by several entries (Redis' LONG_MAX, INT_MAX, UINT_MAX).
const (
	maxI64 = float64(math.MaxInt64)
	maxI32 = float64(math.MaxInt32)
	minI32 = float64(math.MinInt32)
	maxU32 = float64(math.MaxUint32)
	mib    = 1 << 20
)

// tableDocs lists the TOML tables in file order, with the comment above each.
var tableDocs = []struct{ name, doc string }{
	{"server", "The Redis-protocol listener, shards and client limits."},
	{"memory", "Memory limit and eviction."},
	{"slowlog", "The slow-command log (SLOWLOG, /debug/api/slowlog)."},
	{"hotshards", "Per-shard traffic analysis (DEBUG HOTSHARDS, INFO hotshards). A shard's fair share is total ops/sec divided by the number of shards."},
	{"status", "Thresholds of the health verdict in STATUS JSON and /status/json."},
	{"debug-bundle", "Diagnostic bundles (/debug/api/bundle/*, DEBUG BUNDLE)."},
	{"http", "The HTTP diagnostics server (health, metrics, status, debug UI and API)."},
	{"logging", "Logs (log/slog): level, format, where they go."},
	{"logging.rotation", "Rotation of the log file set by [logging] file-path."},
	{"tracing", "OpenTelemetry tracing, exported with OTLP over HTTP/protobuf."},
	{"redis", "Redis 7.0 parameters under their Redis names, for clients, tools and redis.conf habits. Validated like Redis does and shown by CONFIG GET; each takes effect where svcdb has the matching behaviour."},
	{"persistence", "Snapshots (RDB) and the append-only file (AOF), under Redis' names; files live in [server] data-dir (see docs/persistence.md)."},
	{"acl", "Access control lists (Redis 7.0 ACL). Users come from an ACL file (aclfile, Redis' format: one 'user <name> <rules>' line each) or from [[acl.user]] tables in this file, each with a name and its rules as ACL SETUSER takes them (e.g. name = \"app\", rules = \"on >secret ~app:* +@read +@write\"); not both, as in Redis. Without either, the default user takes requirepass."},
}

// defs is the parameter table: one entry per parameter, in the order
// GenerateTOML and the docs list them. Adding a parameter is adding an entry
// here (and, if it is mutable, an OnChange hook where it takes effect).
func defs() []*Param {
	return []*Param{
		// [server]
		{Name: "bind", Table: "server", Key: "bind", Kind: IP, Default: "127.0.0.1",
			Doc: "Address of the Redis-protocol listener: one IPv4 or IPv6 literal (0.0.0.0 or :: for all interfaces)"},
		{Name: "port", Table: "server", Key: "port", Kind: Int, Default: "6379", Min: 0, Max: 65535, HasRange: true,
			Doc: "TCP port of the Redis-protocol listener (0 picks a free port)"},
		// 16: measured on 2 cores (docs/performance.md), 1, 4 and 16 shards
		// perform alike within noise under run-to-completion; 16 keeps token
		// contention between loops rare on larger machines at no measurable cost.
		{Name: "shards", Table: "server", Key: "shards", Kind: Int, Default: "16", Min: 1, Max: 256, HasRange: true,
			Doc: "Number of keyspace shards, each owned by one goroutine"},
		{Name: "event-loops", Table: "server", Key: "event-loops", Kind: Int, Default: "0", Min: 0, Max: 1024, HasRange: true,
			Doc: "Number of network event loops; 0 means one per CPU the process may use, less one (at least one)"},
		{Name: "maxclients", Table: "server", Key: "maxclients", Kind: Int, Default: "10000", Min: 1, Max: maxU32, HasRange: true, Mutable: true,
			Doc: "Maximum number of connected clients; further connections are refused"},
		{Name: "timeout", Table: "server", Key: "timeout", Kind: Duration, Seconds: true, Default: "0", Min: 0, Max: maxI32, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "Close a client idle for this long (0 = never)"},
		{Name: "tcp-keepalive", Table: "server", Key: "tcp-keepalive", Kind: Duration, Seconds: true, Default: "300", Min: 0, Max: maxI32, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "TCP keepalive period of client connections (0 = off)"},
		{Name: "databases", Table: "server", Key: "databases", Kind: Int, Default: "16", Min: 16, Max: 16, HasRange: true,
			allowed: "16 (svcdb has exactly 16 databases, SELECT 0..15)",
			Doc:     "Number of logical databases; svcdb supports exactly 16"},
		{Name: "requirepass", Table: "server", Key: "requirepass", Kind: String, Default: "", Mutable: true, Secret: true,
			Doc: "Password clients must AUTH with; empty means no password"},
		{Name: "protected-mode", Table: "server", Key: "protected-mode", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "While the default user has no password, refuse clients from non-loopback addresses with Redis' -DENIED error"},
		// Immutable, as in Redis 7.0: a client that could switch it on could
		// then stall the server with DEBUG SLEEP.
		{Name: "enable-debug-command", Table: "server", Key: "enable-debug-command", Kind: Enum, Default: "no", Enum: []string{"no", "yes", "local"},
			Doc: "Who may run DEBUG SLEEP and the other state-changing DEBUG subcommands: no one, every client, or local (loopback) clients; DEBUG HOTSHARDS, BUNDLE and HELP are always available"},
		// 50: measured on 2 CPUs against main (docs/performance.md, "An
		// adaptive spin before the loop sleeps").
		{Name: "svc-loop-spin-us", Table: "server", Key: "loop-spin-us", Kind: Int, Default: "50", Min: 0, Max: 1000, HasRange: true, Unit: "microseconds",
			Doc: "Longest an event loop keeps polling (epoll_wait with a zero timeout) after a turn that handled events, before it sleeps, so that a client's next request finds it awake; 0 = never. Adaptive: spins spend a credit the loop earns at a quarter of its busy time at most (capped at this value), earned more slowly while spins find nothing (down to a 32nd, then none for up to 64 turns), so spinning never costs more than a quarter of the loop's useful work. Read at start"},
		{Name: "data-dir", Aliases: []string{"dir"}, Table: "server", Key: "data-dir", Kind: String, Default: ".", check: nonEmpty,
			Doc: "Directory for data files and, by default, diagnostic bundles"},

		// [acl]
		{Name: "aclfile", Table: "acl", Key: "aclfile", Kind: String, Default: "",
			Doc: "ACL file loaded at start and by ACL LOAD, written by ACL SAVE (mode 0600); empty means none. Not together with [[acl.user]]"},
		{Name: "acl-pubsub-default", Table: "acl", Key: "acl-pubsub-default", Kind: Enum, Default: "resetchannels", Mutable: true,
			Enum: []string{"allchannels", "resetchannels"},
			Doc:  "Channels a new user (and a user after 'reset') may use: none (resetchannels) or all (allchannels)"},
		{Name: "acllog-max-len", Table: "acl", Key: "acllog-max-len", Kind: Int, Default: "128", Min: 0, Max: maxI32, HasRange: true, Mutable: true,
			Doc: "Entries ACL LOG keeps (denied commands, keys, channels and failed AUTHs); the oldest go first"},

		// [memory]
		{Name: "maxmemory", Table: "memory", Key: "maxmemory", Kind: Size, Default: "0", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Memory limit for data; 0 means no limit"},
		{Name: "maxmemory-clients", Table: "memory", Key: "maxmemory-clients", Kind: Size, Percent: true, Default: "0", Unit: "bytes or percent", Mutable: true,
			Doc: "Client eviction, as Redis 7.0: past this total of normal and Pub/Sub clients' memory (tot-mem), the biggest clients are closed; a byte count, or a percentage of maxmemory (e.g. 10%); 0 = off. A limit under 128 KiB counts as 128 KiB"},
		{Name: "maxmemory-policy", Table: "memory", Key: "maxmemory-policy", Kind: Enum, Default: "noeviction", Mutable: true,
			Enum: []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"},
			Doc:  "What a write does when maxmemory is reached: evict keys by this policy, or fail (noeviction)"},
		// Off by default: a 64 MiB floor removed every collection from
		// memtier's 10 s P1 loads and did not lower the tail
		// (docs/performance.md, "A floor under the collector's heap goal
		// (issue 21, part 4)").
		{Name: "svc-gc-heap-floor", Table: "memory", Key: "gc-heap-floor", Kind: Size, Default: "0", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "A floor under the Go collector's heap goal: while the live heap is under half of it, the next collection starts when the heap reaches this size rather than twice the live heap (GOGC's percent applies above it; GOGC=off stays off; a memory limit, GOMEMLIMIT's or maxmemory's, still caps the goal). Fewer collections, whose marking shares the event loop's CPU, at the cost of up to this much uncollected garbage while the heap is small; nothing at scale. 0 (the default) = the runtime's own pacing: measured at memtier's pipeline 1, 64mb removed every collection from a 10 s load but not the tail. INFO's gc_gogc shows the percent it sets"},
		{Name: "svc-huge-pages", Table: "memory", Key: "huge-pages", Kind: Bool, Default: "yes",
			Doc: "Put the Go heap on transparent huge pages where the kernel's THP mode is madvise or always: once a second, after a second in which the process used under a quarter of a CPU, a background goroutine collapses (madvise MADV_COLLAPSE) each 2 MiB heap block whose pages are all resident (a collapse holds a CPU for about 7 ms), never setting MADV_HUGEPAGE, so RSS does not grow; fewer TLB misses on a large keyspace (server CPU per command 5-11% lower at 5M keys). Read at start. INFO memory's used_memory_rss_huge shows what it got"},

		// [slowlog]
		{Name: "slowlog-log-slower-than", Table: "slowlog", Key: "log-slower-than", Kind: Int, Default: "10000", Min: -1, Max: maxI64, HasRange: true, Unit: "microseconds", Mutable: true,
			Doc: "Log commands slower than this; 0 logs every command, -1 disables the slowlog"},
		{Name: "slowlog-max-len", Table: "slowlog", Key: "max-len", Kind: Int, Default: "128", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Number of slowlog entries kept"},
		{Name: "slowlog-max-arg-len", Table: "slowlog", Key: "max-arg-len", Kind: Int, Default: "128", Min: 1, Max: 65536, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Longest argument a slowlog entry keeps; longer ones are truncated"},

		// [hotshards]
		{Name: "hotshards-enabled", Table: "hotshards", Key: "enabled", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Count per-shard traffic for DEBUG HOTSHARDS, INFO hotshards and the status document"},
		{Name: "hotshards-hot-threshold-percent", Table: "hotshards", Key: "hot-threshold-percent", Kind: Int, Default: "100", Min: 1, Max: 10000, HasRange: true, Unit: "percent", Mutable: true,
			Doc: "A shard is HOT when its ops/sec exceed its fair share by this many percent (100 = twice the fair share)"},
		{Name: "hotshards-warm-threshold-percent", Table: "hotshards", Key: "warm-threshold-percent", Kind: Int, Default: "50", Min: 1, Max: 10000, HasRange: true, Unit: "percent", Mutable: true,
			Doc: "A shard is WARM when its ops/sec exceed its fair share by this many percent; must be below hot-threshold-percent"},
		{Name: "hotshards-default-period-secs", Table: "hotshards", Key: "default-period-secs", Kind: Int, Default: "10", Min: 1, Max: 60, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "Period DEBUG HOTSHARDS analyses when no PERIOD is given (the shards keep 60 s)"},

		// [status]
		{Name: "status-memory-warning-percent", Table: "status", Key: "memory-warning-percent", Kind: Int, Default: "80", Min: 1, Max: 100, HasRange: true, Unit: "percent", Mutable: true,
			Doc: "Health is degraded when used memory exceeds this percentage of maxmemory (never when maxmemory is 0)"},
		{Name: "status-connection-warning-percent", Table: "status", Key: "connection-warning-percent", Kind: Int, Default: "80", Min: 1, Max: 100, HasRange: true, Unit: "percent", Mutable: true,
			Doc: "Health is degraded when connected clients exceed this percentage of maxclients"},

		// [debug-bundle]
		{Name: "debug-bundle-dir", Table: "debug-bundle", Key: "dir", Kind: String, Default: "",
			Doc: "Directory of diagnostic bundles; empty means <data-dir>/bundles"},
		{Name: "debug-bundle-max-bundles", Table: "debug-bundle", Key: "max-bundles", Kind: Int, Default: "10", Min: 1, Max: 1000, HasRange: true, Unit: "bundles", Mutable: true,
			Doc: "Bundles kept; the oldest are deleted beyond this"},
		{Name: "debug-bundle-ttl", Table: "debug-bundle", Key: "ttl", Kind: Duration, Default: "24h", Min: 1, Max: 8760 * 3600, HasRange: true, Mutable: true,
			Doc: "Bundles older than this are deleted"},

		// [http]
		{Name: "http-enabled", Table: "http", Key: "enabled", Kind: Bool, Default: "no",
			Doc: "Start the HTTP diagnostics server (--http-port implies true)"},
		{Name: "http-bind", Table: "http", Key: "bind", Kind: IP, Default: "127.0.0.1",
			Doc: "Address the HTTP server listens on: one IPv4 or IPv6 literal"},
		{Name: "http-port", Table: "http", Key: "port", Kind: Int, Default: "9090", Min: 0, Max: 65535, HasRange: true,
			Doc: "TCP port of the HTTP server (0 picks a free port)"},
		{Name: "http-token", Table: "http", Key: "token", Kind: String, Default: "", Secret: true,
			Doc: "Bearer token of /debug/api/*; empty means the API answers 403 (set it with SVC_HTTP_TOKEN)"},
		{Name: "http-protect-metrics", Table: "http", Key: "protect-metrics", Kind: Bool, Default: "no",
			Doc: "Put /metrics and /status/json behind the bearer token too (by default they are public: they hold no secrets)"},

		// [logging]
		{Name: "loglevel", Table: "logging", Key: "level", Kind: Enum, Default: "info", Mutable: true,
			Enum:        []string{"trace", "debug", "info", "warn", "error"},
			EnumAliases: map[string]string{"verbose": "debug", "notice": "info", "warning": "warn"},
			Doc:         "Least severe level logged; CONFIG SET loglevel applies before it replies"},
		{Name: "logging-format", Table: "logging", Key: "format", Kind: Enum, Default: "pretty", Enum: []string{"pretty", "json"},
			Doc: "Log line format: pretty (coloured on a terminal) or json"},
		{Name: "logging-output", Table: "logging", Key: "output", Kind: Enum, Default: "stdout", Enum: []string{"stdout", "stderr", "none"},
			Doc: "Stream logs go to, besides the file-path file if set"},
		{Name: "logging-per-request-spans", Table: "logging", Key: "per-request-spans", Kind: Bool, Default: "no", Mutable: true,
			Doc: "One tracing span per command (costs CPU; the measured overhead is in the tracing docs)"},
		{Name: "logging-file-path", Table: "logging", Key: "file-path", Kind: String, Default: "",
			Doc: "Also write logs to this file, rotated as [logging.rotation] says; empty means no file"},

		// [logging.rotation]
		{Name: "logging-rotation-max-size-mb", Table: "logging.rotation", Key: "max-size-mb", Kind: Int, Default: "100", Min: 0, Max: mib, HasRange: true, Unit: "MiB",
			Doc: "Rotate the log file when it reaches this size (0 = no size limit)"},
		{Name: "logging-rotation-frequency", Table: "logging.rotation", Key: "frequency", Kind: Enum, Default: "daily", Enum: []string{"daily", "hourly", "never"},
			Doc: "Also rotate the log file every day or hour, or never by time"},
		{Name: "logging-rotation-max-files", Table: "logging.rotation", Key: "max-files", Kind: Int, Default: "7", Min: 0, Max: 100000, HasRange: true, Unit: "files",
			Doc: "Rotated log files kept (0 = keep all)"},

		// [tracing]
		{Name: "tracing-enabled", Table: "tracing", Key: "enabled", Kind: Bool, Default: "no",
			Doc: "Export traces with OTLP/HTTP"},
		{Name: "tracing-otlp-endpoint", Table: "tracing", Key: "otlp-endpoint", Kind: URL, Default: "http://127.0.0.1:4318",
			Doc: "OTLP/HTTP collector address"},
		{Name: "tracing-sampling-rate", Table: "tracing", Key: "sampling-rate", Kind: Float, Default: "1", Min: 0, Max: 1, HasRange: true, Unit: "fraction", Mutable: true,
			Doc: "Fraction of traces sampled (parent-based)"},
		{Name: "tracing-service-name", Table: "tracing", Key: "service-name", Kind: String, Default: "svcdb", check: nonEmpty,
			Doc: "service.name reported with every span"},

		// [redis]
		{Name: "proto-max-bulk-len", Table: "redis", Key: "proto-max-bulk-len", Kind: Size, Default: "536870912", Min: mib, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Largest bulk string a client may send"},
		{Name: "client-query-buffer-limit", Table: "redis", Key: "client-query-buffer-limit", Kind: Size, Default: "1073741824", Min: mib, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "A client whose unparsed input exceeds this is disconnected (at most 1mb before it authenticates)"},
		{Name: "client-output-buffer-limit", Table: "redis", Key: "client-output-buffer-limit", Kind: String, Mutable: true,
			Default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
			check:   checkOutputBufferLimit,
			allowed: "<class> <hard> <soft> <soft-seconds> groups; class normal, replica (slave) or pubsub; sizes in bytes or with units; 0 = no limit",
			Doc:     "Per client class: disconnect above <hard> bytes pending, or above <soft> for <soft-seconds>"},
		{Name: "tracking-table-max-keys", Table: "redis", Key: "tracking-table-max-keys", Kind: Int, Default: "1000000", Min: 0, Max: maxI64, HasRange: true, Unit: "keys", Mutable: true,
			Doc: "Client-side caching: most keys the tracking table remembers; past it random keys are forgotten and invalidated (0 = no limit)"},
		{Name: "list-max-listpack-size", Aliases: []string{"list-max-ziplist-size"}, Table: "redis", Key: "list-max-listpack-size", Kind: Int, Default: "-2", Min: minI32, Max: maxI32, HasRange: true, Mutable: true,
			Doc: "List node size: positive = entries per node, -1..-5 = 4, 8, 16, 32, 64 KiB per node"},
		{Name: "list-compress-depth", Table: "redis", Key: "list-compress-depth", Kind: Int, Default: "0", Min: 0, Max: maxI32, HasRange: true, Unit: "nodes", Mutable: true,
			Doc: "Quicklist nodes kept plain at each end of a list; the nodes between are LZF-compressed (0 = none). Applies to lists that become quicklists afterwards"},
		{Name: "hash-max-listpack-entries", Aliases: []string{"hash-max-ziplist-entries"}, Table: "redis", Key: "hash-max-listpack-entries", Kind: Int, Default: "512", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Hashes with at most this many fields use the compact encoding"},
		{Name: "hash-max-listpack-value", Aliases: []string{"hash-max-ziplist-value"}, Table: "redis", Key: "hash-max-listpack-value", Kind: Int, Default: "64", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Hashes whose fields and values are at most this long use the compact encoding"},
		{Name: "set-max-intset-entries", Table: "redis", Key: "set-max-intset-entries", Kind: Int, Default: "512", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Sets of integers with at most this many members use the intset encoding"},
		{Name: "set-max-listpack-entries", Table: "redis", Key: "set-max-listpack-entries", Kind: Int, Default: "128", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Sets with at most this many members use the compact encoding (Redis 7.2)"},
		{Name: "set-max-listpack-value", Table: "redis", Key: "set-max-listpack-value", Kind: Int, Default: "64", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Sets whose members are at most this long use the compact encoding (Redis 7.2)"},
		{Name: "zset-max-listpack-entries", Aliases: []string{"zset-max-ziplist-entries"}, Table: "redis", Key: "zset-max-listpack-entries", Kind: Int, Default: "128", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Sorted sets with at most this many members use the compact encoding"},
		{Name: "zset-max-listpack-value", Aliases: []string{"zset-max-ziplist-value"}, Table: "redis", Key: "zset-max-listpack-value", Kind: Int, Default: "64", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Sorted sets whose members are at most this long use the compact encoding"},
		{Name: "sanitize-dump-payload", Table: "redis", Key: "sanitize-dump-payload", Kind: Enum, Default: "yes", Enum: []string{"yes"}, Mutable: true,
			Doc: "RESTORE validates every DUMP payload in full, as Redis with yes (no and clients, which skip checks, are refused)"},
		{Name: "hll-sparse-max-bytes", Table: "redis", Key: "hll-sparse-max-bytes", Kind: Size, Default: "3000", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "HyperLogLogs up to this many bytes (header included) use the sparse encoding; a longer one is promoted to dense"},
		{Name: "stream-node-max-entries", Table: "redis", Key: "stream-node-max-entries", Kind: Int, Default: "100", Min: 0, Max: maxI64, HasRange: true, Unit: "entries", Mutable: true,
			Doc: "Entries per stream node (0 = no limit)"},
		{Name: "notify-keyspace-events", Table: "redis", Key: "notify-keyspace-events", Kind: String, Default: "", Mutable: true,
			check:   checkKeyspaceEvents,
			allowed: `"" (off) or event classes from "Ag$lshzxeKEtmdn", e.g. "Ex"`,
			Doc:     "Keyspace notifications published over Pub/Sub (Redis' class letters)"},
		{Name: "busy-reply-threshold", Aliases: []string{"lua-time-limit"}, Table: "redis", Key: "busy-reply-threshold", Kind: Int, Default: "5000", Min: 0, Max: maxI64, HasRange: true, Unit: "milliseconds", Mutable: true,
			Doc: "A script running longer than this makes other clients get -BUSY"},
		{Name: "hz", Table: "redis", Key: "hz", Kind: Int, Default: "10", Min: 0, Max: maxI32, HasRange: true, Unit: "per second", Mutable: true,
			check: checkHz,
			Doc:   "Frequency of background tasks (expiry sampling); clamped to 1..500 as Redis does"},
		{Name: "jemalloc-bg-thread", Table: "redis", Key: "jemalloc-bg-thread", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Return the Go heap's freed memory to the OS once a burst of writes is over (a collection and a scavenge, at most one per 10 s and 5% of the time), as Redis' jemalloc background thread returns dirty pages; no: the runtime's own pacing (up to twice the live heap stays resident)"},
		{Name: "latency-monitor-threshold", Table: "redis", Key: "latency-monitor-threshold", Kind: Int, Default: "0", Min: 0, Max: maxI64, HasRange: true, Unit: "milliseconds", Mutable: true,
			Doc: "Record latency events (LATENCY LATEST) at least this long; 0 = off"},

		// [persistence]
		{Name: "save", Table: "persistence", Key: "save", Kind: Save, Default: "", Mutable: true,
			Doc: "Snapshot rules \"<seconds> <changes> ...\"; empty = no snapshots"},
		{Name: "appendonly", Table: "persistence", Key: "appendonly", Kind: Bool, Default: "no", Mutable: true,
			Doc: "Append-only file on or off"},
		{Name: "appendfsync", Table: "persistence", Key: "appendfsync", Kind: Enum, Default: "everysec", Enum: []string{"everysec", "always", "no"}, Mutable: true,
			Doc: "When the append-only file is fsynced"},
		{Name: "dbfilename", Table: "persistence", Key: "dbfilename", Kind: String, Default: "dump.rdb", check: checkFilename("dbfilename", "filename"),
			Doc: "Snapshot file name inside data-dir"},
		{Name: "appenddirname", Table: "persistence", Key: "appenddirname", Kind: String, Default: "appendonlydir", check: checkFilename("appenddirname", "dirname"),
			Doc: "Append-only directory name inside data-dir"},
		{Name: "aof-load-truncated", Table: "persistence", Key: "aof-load-truncated", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Load a truncated append-only file instead of refusing to start"},
		{Name: "appendfilename", Table: "persistence", Key: "appendfilename", Kind: String, Default: "appendonly.aof", check: checkFilename("appendfilename", "filename"),
			Doc: "Base name of the append-only files inside appenddirname (<name>.<seq>.base.rdb, <name>.<seq>.incr.aof, <name>.manifest)"},
		{Name: "rdbcompression", Table: "persistence", Key: "rdbcompression", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Compress strings longer than 20 bytes in snapshots and AOF bases with LZF, as Redis"},
		{Name: "stop-writes-on-bgsave-error", Table: "persistence", Key: "stop-writes-on-bgsave-error", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Refuse writes with -MISCONF while the last snapshot failed and save rules are set"},
		{Name: "auto-aof-rewrite-percentage", Table: "persistence", Key: "auto-aof-rewrite-percentage", Kind: Int, Default: "100", Min: 0, Max: maxI32, HasRange: true, Unit: "percent", Mutable: true,
			Doc: "Rewrite the append-only file when it grew this much over its size after the last rewrite (0 = never)"},
		{Name: "auto-aof-rewrite-min-size", Table: "persistence", Key: "auto-aof-rewrite-min-size", Kind: Size, Default: "67108864", Min: 0, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "No automatic rewrite while the append-only file is smaller than this"},

		// [redis], the replica side of replication (docs/replication.md)
		{Name: "masteruser", Table: "redis", Key: "masteruser", Kind: String, Default: "", Mutable: true,
			Doc: "User a replica authenticates as with its master (AUTH <masteruser> <masterauth>); empty: AUTH <masterauth> as the default user"},
		{Name: "masterauth", Table: "redis", Key: "masterauth", Kind: String, Default: "", Mutable: true, Secret: true,
			Doc: "Password a replica authenticates with to its master; empty: no AUTH. Read at each connection to the master"},
		{Name: "replica-read-only", Aliases: []string{"slave-read-only"}, Table: "redis", Key: "replica-read-only", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "A replica refuses clients' write commands with -READONLY"},
		{Name: "replica-serve-stale-data", Aliases: []string{"slave-serve-stale-data"}, Table: "redis", Key: "replica-serve-stale-data", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "While a replica's link to its master is down or syncing, serve the data it has; no: refuse commands without Redis' stale flag with -MASTERDOWN"},
		{Name: "replicaof", Aliases: []string{"slaveof"}, Table: "redis", Key: "replicaof", Kind: String, Default: "", check: checkReplicaOf,
			Doc: "\"<host> <port>\": start as a replica of that master; empty: a master. REPLICAOF changes it at run time (not CONFIG SET), so CONFIG REWRITE persists the role"},
		{Name: "replica-priority", Aliases: []string{"slave-priority"}, Table: "redis", Key: "replica-priority", Kind: Int, Default: "100", Min: 0, Max: maxI32, HasRange: true, Mutable: true,
			Doc: "Shown to Sentinel in INFO replication (slave_priority): it promotes the replica with the lowest priority first; 0: never promote this replica"},
		{Name: "replica-announce-ip", Aliases: []string{"slave-announce-ip"}, Table: "redis", Key: "replica-announce-ip", Kind: String, Default: "", Mutable: true,
			Doc: "Address a replica announces to its master (REPLCONF ip-address), which shows it to Sentinel, instead of the connection's source address (NAT, containers). Read at each connection to the master"},
		{Name: "replica-announce-port", Aliases: []string{"slave-announce-port"}, Table: "redis", Key: "replica-announce-port", Kind: Int, Default: "0", Min: 0, Max: 65535, HasRange: true, Mutable: true,
			Doc: "Port a replica announces to its master (REPLCONF listening-port) instead of the one it listens on; 0: the listening port. Read at each connection to the master"},
		{Name: "replica-announced", Table: "redis", Key: "replica-announced", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "Whether Sentinel lists this replica (INFO replication's replica_announced); no: Sentinel ignores it in its replies and failovers"},

		// [redis], the master side of replication (docs/replication.md)
		{Name: "repl-diskless-sync", Table: "redis", Key: "repl-diskless-sync", Kind: Bool, Default: "yes", Mutable: true,
			Doc: "A full sync streams the snapshot to a replica that accepts it (capa eof) instead of writing it to a file in data-dir first. Read at each full sync"},
		{Name: "min-replicas-to-write", Aliases: []string{"min-slaves-to-write"}, Table: "redis", Key: "min-replicas-to-write", Kind: Int, Default: "0", Min: 0, Max: maxI32, HasRange: true, Mutable: true,
			Doc: "A master refuses writes with -NOREPLICAS while fewer replicas than this acknowledged within min-replicas-max-lag; 0: off"},
		{Name: "min-replicas-max-lag", Aliases: []string{"min-slaves-max-lag"}, Table: "redis", Key: "min-replicas-max-lag", Kind: Int, Default: "10", Min: 0, Max: maxI32, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "How old a replica's last acknowledgement may be for min-replicas-to-write to count it; 0: the check is off"},
		{Name: "repl-backlog-size", Table: "redis", Key: "repl-backlog-size", Kind: Size, Default: "1048576", Min: 16384, Max: maxI64, HasRange: true, Unit: "bytes", Mutable: true,
			Doc: "Size of the replication backlog, the newest part of the stream kept so a replica that reconnects can continue (+CONTINUE)"},
		{Name: "repl-backlog-ttl", Table: "redis", Key: "repl-backlog-ttl", Kind: Int, Default: "3600", Min: 0, Max: maxI64, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "A master that has had no replica for this long frees its backlog (a replica that comes later syncs in full); 0: never"},
		{Name: "repl-ping-replica-period", Aliases: []string{"repl-ping-slave-period"}, Table: "redis", Key: "repl-ping-replica-period", Kind: Int, Default: "10", Min: 1, Max: maxI32, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "A master sends PING into the replication stream this often, so its replicas see the link alive and their offsets move"},
		{Name: "repl-diskless-sync-delay", Table: "redis", Key: "repl-diskless-sync-delay", Kind: Int, Default: "5", Min: 0, Max: maxI32, HasRange: true, Unit: "seconds", Mutable: true,
			Doc: "A diskless full sync waits this long after the first replica asked, so replicas that come meanwhile share its one snapshot; 0: start at once"},
		{Name: "repl-diskless-sync-max-replicas", Table: "redis", Key: "repl-diskless-sync-max-replicas", Kind: Int, Default: "0", Min: 0, Max: maxI32, HasRange: true, Mutable: true,
			Doc: "A diskless full sync starts before repl-diskless-sync-delay ends once this many replicas wait for it; 0: no such limit"},
	}
}

func nonEmpty(_, v string) (string, *valueError) {
	if strings.TrimSpace(v) == "" {
		return "", &valueError{redis: "argument must not be empty", msg: "must not be empty", allowed: "a non-empty string"}
	}
	return v, nil
}

// checkFilename is Redis' check for dbfilename and appenddirname.
func checkFilename(name, what string) func(_, v string) (string, *valueError) {
	return func(_, v string) (string, *valueError) {
		if v == "" || strings.ContainsAny(v, "/\\") || v == "." || v == ".." {
			r := name + " can't be a path, just a " + what
			return "", &valueError{redis: r, msg: "invalid value " + strconv.Quote(v) + ": " + r, allowed: "a plain " + what}
		}
		return v, nil
	}
}

// checkReplicaOf accepts "" or "<host> <port>" with a port in 0..65535 (the
// config file's replicaof directive; REPLICAOF NO ONE records "").
func checkReplicaOf(_, v string) (string, *valueError) {
	f := strings.Fields(v)
	if len(f) == 0 {
		return "", nil
	}
	if len(f) == 2 {
		if port, err := strconv.Atoi(f[1]); err == nil && port >= 0 && port <= 65535 {
			return f[0] + " " + f[1], nil
		}
	}
	return "", &valueError{redis: "Invalid master address", msg: "invalid value " + strconv.Quote(v) + ": want \"<host> <port>\"", allowed: "\"<host> <port>\" or empty"}
}

// checkHz clamps as Redis does (server.c: config_hz within CONFIG_MIN_HZ 1 and
// CONFIG_MAX_HZ 500); CONFIG GET prints the clamped value.
func checkHz(_, v string) (string, *valueError) {
	n, _ := strconv.ParseInt(v, 10, 64)
	n = min(max(n, 1), 500)
	return strconv.FormatInt(n, 10), nil
}

// Keyspace event classes, as Redis' notify.c.
const (
	nGeneric = 1 << iota
	nString
	nList
	nSet
	nHash
	nZset
	nExpired
	nEvicted
	nStream
	nModule
	nNew
	nKeyspace
	nKeyevent
	nKeyMiss
	nAll = nGeneric | nString | nList | nSet | nHash | nZset | nExpired | nEvicted | nStream | nModule
)

// checkKeyspaceEvents is keyspaceEventsStringToFlags then
// keyspaceEventsFlagsToString: "KEA" prints as "AKE", "Ex" as "xE".
func checkKeyspaceEvents(_, v string) (string, *valueError) {
	flags := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case 'A':
			flags |= nAll
		case 'g':
			flags |= nGeneric
		case '$':
			flags |= nString
		case 'l':
			flags |= nList
		case 's':
			flags |= nSet
		case 'h':
			flags |= nHash
		case 'z':
			flags |= nZset
		case 'x':
			flags |= nExpired
		case 'e':
			flags |= nEvicted
		case 'K':
			flags |= nKeyspace
		case 'E':
			flags |= nKeyevent
		case 't':
			flags |= nStream
		case 'm':
			flags |= nKeyMiss
		case 'd':
			flags |= nModule
		case 'n':
			flags |= nNew
		default:
			const r = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
			return "", &valueError{redis: r, msg: "invalid event classes " + strconv.Quote(v), allowed: `"" or letters from "Ag$lshzxeKEtmdn"`}
		}
	}
	var b strings.Builder
	if flags&nAll == nAll {
		b.WriteByte('A')
	} else {
		for _, f := range []struct {
			bit int
			c   byte
		}{{nGeneric, 'g'}, {nString, '$'}, {nList, 'l'}, {nSet, 's'}, {nHash, 'h'}, {nZset, 'z'}, {nExpired, 'x'}, {nEvicted, 'e'}, {nStream, 't'}, {nModule, 'd'}, {nNew, 'n'}} {
			if flags&f.bit != 0 {
				b.WriteByte(f.c)
			}
		}
	}
	if flags&nAll == nAll && flags&nNew != 0 {
		// Redis 7.0 prints 'n' only inside the non-A branch, so "An" reads
		// back as "A" there; we keep it, since A does not include n.
		b.WriteByte('n')
	}
	if flags&nKeyspace != 0 {
		b.WriteByte('K')
	}
	if flags&nKeyevent != 0 {
		b.WriteByte('E')
	}
	if flags&nKeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String(), nil
}

// checkOutputBufferLimit is Redis' setConfigClientOutputBufferLimitOption:
// groups of <class> <hard> <soft> <soft_seconds>; the classes not named keep
// their current limits; "" changes nothing. Prints all three classes.
func checkOutputBufferLimit(old, v string) (string, *valueError) {
	cur := parseOBL(old)
	f := strings.Fields(v)
	if len(f) == 0 {
		return formatOBL(cur), nil
	}
	const (
		errArgs  = "Wrong number of arguments in buffer limit configuration."
		errClass = "Invalid client class specified in buffer limit configuration."
		errNums  = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		allowed  = "<class> <hard> <soft> <soft-seconds> groups; class normal, replica (slave) or pubsub"
	)
	if len(f)%4 != 0 {
		return "", &valueError{redis: errArgs, msg: "invalid client output buffer limits " + strconv.Quote(v) + ": want groups of four words", allowed: allowed}
	}
	for i := 0; i < len(f); i += 4 {
		c := oblClass(f[i])
		if c < 0 {
			return "", &valueError{redis: errClass, msg: "invalid client class " + strconv.Quote(f[i]), allowed: allowed}
		}
		hard, ok1 := parseSize(f[i+1])
		soft, ok2 := parseSize(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 64)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return "", &valueError{redis: errNums, msg: "invalid limits for class " + f[i] + " in " + strconv.Quote(v), allowed: allowed}
		}
		cur[c] = [3]int64{hard, soft, secs}
	}
	return formatOBL(cur), nil
}

var oblNames = [3]string{"normal", "slave", "pubsub"}

func oblClass(s string) int {
	switch strings.ToLower(s) {
	case "normal":
		return 0
	case "slave", "replica":
		return 1
	case "pubsub":
		return 2
	}
	return -1
}

// parseOBL reads a canonical value (one already validated).
func parseOBL(s string) [3][3]int64 {
	var out [3][3]int64
	f := strings.Fields(s)
	for i := 0; i+3 < len(f); i += 4 {
		if c := oblClass(f[i]); c >= 0 {
			for j := 0; j < 3; j++ {
				out[c][j], _ = strconv.ParseInt(f[i+1+j], 10, 64)
			}
		}
	}
	return out
}

func formatOBL(v [3][3]int64) string {
	var b strings.Builder
	for c, name := range oblNames {
		if c > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		for _, n := range v[c] {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(n, 10))
		}
	}
	return b.String()
}

// OutputBufferLimit is one client class's limits from client-output-buffer-
// limit: Hard and Soft in bytes (0 = none), SoftSeconds.
type OutputBufferLimit struct {
	Hard, Soft, SoftSeconds int64
}

// OutputBufferLimits parses client-output-buffer-limit's value into its
// normal, replica and pubsub classes, for the wiring.
func OutputBufferLimits(v string) (normal, replica, pubsub OutputBufferLimit) {
	p := parseOBL(v)
	conv := func(a [3]int64) OutputBufferLimit { return OutputBufferLimit{a[0], a[1], a[2]} }
	return conv(p[0]), conv(p[1]), conv(p[2])
}

// SaveRule is one "<seconds> <changes>" pair of the save parameter.
type SaveRule struct{ Seconds, Changes int64 }

// SaveRules parses save's value (canonical text) for the wiring.
func SaveRules(v string) []SaveRule {
	f := strings.Fields(v)
	var out []SaveRule
	for i := 0; i+1 < len(f); i += 2 {
		s, _ := strconv.ParseInt(f[i], 10, 64)
		c, _ := strconv.ParseInt(f[i+1], 10, 64)
		out = append(out, SaveRule{s, c})
	}
	return out
}

// crossRule is a rule over several parameters, checked on the whole
// configuration (Validate) and on the would-be state of a CONFIG SET. blame
// names the parameter the message is about.
type crossRule struct {
	params []string
	// check sees the would-be values through get and the defaults
	// through def.
	check func(get, def func(string) string) (blame, msg, allowed string, bad bool)
}

// crossRules are SPEC Part B's rules between parameters.
var crossRules = []crossRule{
	{
		// "rotation without file-path is an error": rotation is configured
		// when a [logging.rotation] value differs from its default. (Every
		// value has a default, so "set at all" cannot be the test: the
		// generated default file sets all of them and must load.)
		params: []string{"logging-file-path", "logging-rotation-max-size-mb", "logging-rotation-frequency", "logging-rotation-max-files"},
		check: func(get, def func(string) string) (string, string, string, bool) {
			if get("logging-file-path") != "" {
				return "", "", "", false
			}
			for _, n := range []string{"logging-rotation-max-size-mb", "logging-rotation-frequency", "logging-rotation-max-files"} {
				if get(n) != def(n) {
					return n, "log rotation is configured but [logging] file-path is empty",
						"set [logging] file-path, or leave [logging.rotation] at its defaults", true
				}
			}
			return "", "", "", false
		},
	},
	{
		params: []string{"logging-rotation-max-size-mb", "logging-rotation-frequency"},
		check: func(get, def func(string) string) (string, string, string, bool) {
			if get("logging-rotation-max-size-mb") == "0" && get("logging-rotation-frequency") == "never" {
				return "logging-rotation-max-size-mb", "max-size-mb 0 with frequency never would never rotate the log file",
					"max-size-mb > 0, or frequency daily or hourly", true
			}
			return "", "", "", false
		},
	},
	{
		params: []string{"hotshards-hot-threshold-percent", "hotshards-warm-threshold-percent"},
		check: func(get, def func(string) string) (string, string, string, bool) {
			hot, _ := strconv.Atoi(get("hotshards-hot-threshold-percent"))
			warm, _ := strconv.Atoi(get("hotshards-warm-threshold-percent"))
			if warm >= hot {
				return "hotshards-warm-threshold-percent", "warm-threshold-percent " + strconv.Itoa(warm) + " is not below hot-threshold-percent " + strconv.Itoa(hot),
					"warm-threshold-percent < hot-threshold-percent", true
			}
			return "", "", "", false
		},
	},
}
