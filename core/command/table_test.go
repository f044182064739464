package command

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

func argv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// wantNames is exactly the set of commands the table must hold for now.
var wantNames = map[string][]string{
	// replication
	"replicaof": nil, "slaveof": nil, "role": nil, "sync": nil, "psync": nil, "replconf": nil, "wait": nil,
	// connection
	"ping": nil, "echo": nil, "quit": nil, "reset": nil, "hello": nil, "auth": nil, "select": nil,
	"client": {"caching", "getname", "getredir", "help", "id", "info", "kill", "list", "no-evict", "pause", "reply", "setinfo", "setname", "tracking", "trackinginfo", "unblock", "unpause"},
	// strings
	"get": nil, "set": nil, "setnx": nil, "setex": nil, "psetex": nil, "getset": nil, "getdel": nil,
	"getex": nil, "mget": nil, "mset": nil, "msetnx": nil, "incr": nil, "decr": nil, "incrby": nil,
	"decrby": nil, "incrbyfloat": nil, "append": nil, "strlen": nil, "getrange": nil, "setrange": nil,
	"substr": nil,
	// bitmap
	"setbit": nil, "getbit": nil, "bitcount": nil, "bitpos": nil, "bitop": nil,
	"bitfield": nil, "bitfield_ro": nil,
	// hyperloglog
	"pfadd": nil, "pfcount": nil, "pfmerge": nil, "pfdebug": nil, "pfselftest": nil,
	// geo
	"geoadd": nil, "geodist": nil, "geohash": nil, "geopos": nil, "geosearch": nil, "geosearchstore": nil,
	"georadius": nil, "georadius_ro": nil, "georadiusbymember": nil, "georadiusbymember_ro": nil,
	// generic
	"del": nil, "unlink": nil, "exists": nil, "type": nil, "touch": nil, "rename": nil, "renamenx": nil,
	"copy": nil, "keys": nil, "scan": nil, "randomkey": nil, "expire": nil, "pexpire": nil,
	"expireat": nil, "pexpireat": nil, "ttl": nil, "pttl": nil, "expiretime": nil, "pexpiretime": nil,
	"persist": nil,
	"move":    nil, "swapdb": nil, "dump": nil, "restore": nil, "migrate": nil, "lcs": nil, "sort": nil, "sort_ro": nil,
	"object": {"encoding", "freq", "help", "idletime", "refcount"},
	"memory": {"doctor", "help", "malloc-stats", "purge", "stats", "usage"},
	// hash
	"hdel": nil, "hexists": nil, "hget": nil, "hgetall": nil, "hincrby": nil, "hincrbyfloat": nil,
	"hkeys": nil, "hlen": nil, "hmget": nil, "hmset": nil, "hrandfield": nil, "hscan": nil, "hset": nil,
	"hsetnx": nil, "hstrlen": nil, "hvals": nil,
	// list
	"blmove": nil, "blmpop": nil, "blpop": nil, "brpop": nil, "brpoplpush": nil, "lindex": nil,
	"linsert": nil, "llen": nil, "lmove": nil, "lmpop": nil, "lpop": nil, "lpos": nil, "lpush": nil,
	"lpushx": nil, "lrange": nil, "lrem": nil, "lset": nil, "ltrim": nil, "rpop": nil, "rpoplpush": nil,
	"rpush": nil, "rpushx": nil,
	// set
	"sadd": nil, "scard": nil, "sdiff": nil, "sdiffstore": nil, "sinter": nil, "sintercard": nil,
	"sinterstore": nil, "sismember": nil, "smembers": nil, "smismember": nil, "smove": nil, "spop": nil,
	"srandmember": nil, "srem": nil, "sscan": nil, "sunion": nil, "sunionstore": nil,
	// sorted set
	"bzmpop": nil, "bzpopmax": nil, "bzpopmin": nil, "zadd": nil, "zcard": nil, "zcount": nil, "zdiff": nil,
	"zdiffstore": nil, "zincrby": nil, "zinter": nil, "zintercard": nil, "zinterstore": nil, "zlexcount": nil,
	"zmpop": nil, "zmscore": nil, "zpopmax": nil, "zpopmin": nil, "zrandmember": nil, "zrange": nil,
	"zrangebylex": nil, "zrangebyscore": nil, "zrangestore": nil, "zrank": nil, "zrem": nil,
	"zremrangebylex": nil, "zremrangebyrank": nil, "zremrangebyscore": nil, "zrevrange": nil,
	"zrevrangebylex": nil, "zrevrangebyscore": nil, "zrevrank": nil, "zscan": nil, "zscore": nil,
	"zunion": nil, "zunionstore": nil,
	// stream
	"xack": nil, "xadd": nil, "xautoclaim": nil, "xclaim": nil, "xdel": nil,
	"xgroup": {"create", "createconsumer", "delconsumer", "destroy", "help", "setid"},
	"xinfo":  {"consumers", "groups", "help", "stream"},
	"xlen":   nil, "xpending": nil, "xrange": nil, "xread": nil, "xreadgroup": nil, "xrevrange": nil,
	"xsetid": nil, "xtrim": nil,
	// transactions
	"discard": nil, "exec": nil, "multi": nil, "unwatch": nil, "watch": nil,
	// pubsub
	"psubscribe": nil, "publish": nil, "punsubscribe": nil, "subscribe": nil, "unsubscribe": nil,
	"ssubscribe": nil, "sunsubscribe": nil, "spublish": nil,
	"pubsub": {"channels", "help", "numpat", "numsub", "shardchannels", "shardnumsub"},
	// server
	"dbsize": nil, "flushdb": nil, "flushall": nil, "time": nil, "info": nil, "shutdown": nil, "lastsave": nil, "monitor": nil,
	"save": nil, "bgsave": nil, "bgrewriteaof": nil,
	"debug":   nil,
	"status":  {"help", "json"}, // svcdb's own (svc.go)
	"slowlog": {"get", "help", "len", "reset"},
	"latency": {"doctor", "graph", "help", "histogram", "history", "latest", "reset"},
	"config":  {"get", "help", "resetstat", "rewrite", "set"},
	"command": {"count", "docs", "getkeys", "getkeysandflags", "help", "info", "list"},
	// cluster
	"cluster": {"addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "countkeysinslot",
		"delslots", "delslotsrange", "failover", "flushslots", "forget", "getkeysinslot", "help", "info",
		"keyslot", "links", "meet", "myid", "nodes", "replicas", "replicate", "reset", "saveconfig",
		"set-config-epoch", "setslot", "shards", "slaves", "slots"},
	// scripting
	"eval": nil, "evalsha": nil, "eval_ro": nil, "evalsha_ro": nil,
	"script": {"debug", "exists", "flush", "help", "kill", "load"},
	"fcall":  nil, "fcall_ro": nil,
	"function": {"delete", "dump", "flush", "help", "kill", "list", "load", "restore", "stats"},
	// acl
	"acl": {"cat", "deluser", "dryrun", "genpass", "getuser", "help", "list", "load", "log", "save",
		"setuser", "users", "whoami"},
}

// wantFast are the commands Redis 7.0.15 flags "fast".
var wantFast = strings.Fields(`ping echo quit reset hello auth select get setnx getset getdel getex
	getbit bitfield_ro pfadd move swapdb mget incr decr incrby decrby incrbyfloat append strlen unlink exists type touch renamenx expire
	pexpire expireat pexpireat ttl pttl expiretime pexpiretime persist dbsize time lastsave
	hdel hexists hget hincrby hincrbyfloat hlen hmget hmset hset hsetnx hstrlen
	llen lpop lpush lpushx rpop rpush rpushx
	sadd scard sismember smismember smove spop srem
	bzpopmax bzpopmin zadd zcard zcount zincrby zlexcount zmscore zpopmax zpopmin zrank zrem zrevrank zscore
	xack xadd xautoclaim xclaim xdel xlen xsetid
	discard multi unwatch watch publish spublish role`)

func TestTableContents(t *testing.T) {
	tab := New()
	got := map[string][]string{}
	for _, c := range tab.All() {
		var subs []string
		for _, s := range c.Subcommands {
			subs = append(subs, s.Name)
		}
		got[c.Name] = subs
	}
	for name, subs := range wantNames {
		g, ok := got[name]
		if !ok {
			t.Errorf("missing command %q", name)
			continue
		}
		if !slices.Equal(g, subs) {
			t.Errorf("%s subcommands = %v, want %v", name, g, subs)
		}
	}
	for name := range got {
		if _, ok := wantNames[name]; !ok {
			t.Errorf("unexpected command %q", name)
		}
	}
	if !sort.SliceIsSorted(tab.All(), func(i, j int) bool { return tab.All()[i].Name < tab.All()[j].Name }) {
		t.Error("All() not sorted by name")
	}
}

func TestLookup(t *testing.T) {
	tab := New()
	for _, tc := range []struct{ in, want string }{
		{"get", "get"}, {"GET", "get"}, {"gEt", "get"}, {"IncrByFloat", "incrbyfloat"},
		{"client", "client"}, {"COMMAND", "command"}, {"PExpireTime", "pexpiretime"},
		{"", ""}, {"ge", ""}, {"gett", ""}, {"get ", ""}, {"nosuch", ""}, {"client|setname", ""},
		{"setname", ""}, {"g\x00t", ""}, {strings.Repeat("a", 100), ""}, {"GÉT", ""},
	} {
		c := tab.Lookup([]byte(tc.in))
		got := ""
		if c != nil {
			got = c.FullName
		}
		if got != tc.want {
			t.Errorf("Lookup(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	client := tab.Lookup([]byte("client"))
	for _, tc := range []struct{ in, want string }{
		{"setname", "client|setname"}, {"SETNAME", "client|setname"}, {"SetInfo", "client|setinfo"},
		{"NO-EVICT", "client|no-evict"}, {"nosuch", ""}, {"", ""}, {"set|name", ""}, {"pause", "client|pause"},
		{strings.Repeat("x", 70), ""},
	} {
		c := tab.LookupSub(client, []byte(tc.in))
		got := ""
		if c != nil {
			got = c.FullName
			if c.Parent != client {
				t.Errorf("LookupSub(client, %q).Parent = %v", tc.in, c.Parent)
			}
		}
		if got != tc.want {
			t.Errorf("LookupSub(client, %q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if c := tab.LookupSub(tab.Lookup([]byte("get")), []byte("x")); c != nil {
		t.Errorf("LookupSub(get, x) = %q, want nil", c.FullName)
	}
	if c := tab.LookupSub(nil, []byte("x")); c != nil {
		t.Errorf("LookupSub(nil, x) = %q, want nil", c.FullName)
	}

	for _, tc := range []struct{ in, want string }{
		{"get", "get"}, {"Client|SetName", "client|setname"}, {"CONFIG|GET", "config|get"},
		{"client", "client"}, {"client|", ""}, {"get|x", ""}, {"client|setname|x", ""}, {"|get", ""},
		{"CLUSTER|Count-Failure-Reports", "cluster|count-failure-reports"}, {"cluster|set-config-epoch", "cluster|set-config-epoch"},
		{"cluster|myshardid", ""},
	} {
		c := tab.LookupFullName([]byte(tc.in))
		got := ""
		if c != nil {
			got = c.FullName
		}
		if got != tc.want {
			t.Errorf("LookupFullName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIDsDenseAndUnique(t *testing.T) {
	tab := New()
	seen := map[int]string{}
	n := 0
	for _, c := range tab.All() {
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			n++
			if prev, dup := seen[x.ID]; dup {
				t.Errorf("ID %d used by %q and %q", x.ID, prev, x.FullName)
			}
			seen[x.ID] = x.FullName
			if tab.ByID(x.ID) != x {
				t.Errorf("ByID(%d) != %q", x.ID, x.FullName)
			}
		}
	}
	if n != tab.Len() {
		t.Errorf("Len() = %d, want %d", tab.Len(), n)
	}
	for id := range tab.Len() {
		if _, ok := seen[id]; !ok {
			t.Errorf("ID %d unused: IDs not dense", id)
		}
	}
	if tab.ByID(-1) != nil || tab.ByID(tab.Len()) != nil {
		t.Error("ByID out of range must return nil")
	}
	// Two tables are independent and numbered alike.
	tab2 := New()
	if tab2.Lookup([]byte("get")) == tab.Lookup([]byte("get")) {
		t.Error("New returned shared *Command values")
	}
	if tab2.Lookup([]byte("get")).ID != tab.Lookup([]byte("get")).ID {
		t.Error("IDs differ between tables")
	}
}

func TestCheckArity(t *testing.T) {
	tab := New()
	for _, tc := range []struct {
		cmd  string
		argc int
		ok   bool
	}{
		{"get", 2, true}, {"get", 1, false}, {"get", 3, false},
		{"set", 2, false}, {"set", 3, true}, {"set", 9, true},
		{"mset", 2, false}, {"mset", 3, true}, {"mset", 5, true},
		{"ping", 1, true}, {"ping", 2, true}, {"ping", 3, true}, // PING checks its own maximum
		{"del", 1, false}, {"del", 2, true},
		{"command", 1, true},
		{"client|setname", 2, false}, {"client|setname", 3, true}, {"client|setname", 4, false},
		{"client|setinfo", 4, true}, {"client|setinfo", 3, false},
		{"config|get", 2, false}, {"config|get", 3, true}, {"config|get", 5, true},
		{"cluster", 1, false}, {"cluster", 2, true},
		{"cluster|info", 2, true}, {"cluster|info", 3, false},
		{"cluster|addslotsrange", 3, false}, {"cluster|addslotsrange", 4, true}, {"cluster|addslotsrange", 6, true},
		{"command|getkeys", 3, false}, {"command|getkeys", 4, true},
	} {
		c := tab.LookupFullName([]byte(tc.cmd))
		if c == nil {
			t.Fatalf("no %s", tc.cmd)
		}
		if got := c.CheckArity(tc.argc); got != tc.ok {
			t.Errorf("%s.CheckArity(%d) = %v, want %v", tc.cmd, tc.argc, got, tc.ok)
		}
	}
}

func TestKeys(t *testing.T) {
	tab := New()
	for _, tc := range []struct {
		line string
		want []int
	}{
		{"GET k", []int{1}},
		{"SET k v", []int{1}},
		{"set k v EX 10 GET", []int{1}},
		{"MSET a 1 b 2 c 3", []int{1, 3, 5}},
		{"MSET a 1 b", []int{1, 3}}, // as Redis: the range runs to the last argument
		{"DEL a", []int{1}},
		{"DEL a b c", []int{1, 2, 3}},
		{"RENAME a b", []int{1, 2}},
		{"MGET a b", []int{1, 2}},
		{"COPY a b DB 1", []int{1, 2}},
		{"PING", nil},
		{"KEYS *", nil},
		{"GET", nil}, // too few args: no keys, no panic
		{"RENAME a", nil},
	} {
		args := argv(tc.line)
		c := tab.Lookup(args[0])
		got := c.Keys(args, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Keys(%q) = %v, want %v", tc.line, got, tc.want)
		}
		// Appends to dst and keeps its prefix.
		got = c.Keys(args, []int{-7})
		if got[0] != -7 || !slices.Equal(got[1:], tc.want) {
			t.Errorf("Keys(%q, [-7]) = %v", tc.line, got)
		}
	}
}

// TestLegacyKeysMatchKeySpecs checks, for every keyed command and several
// argument counts, that the legacy first/last/step positions find the same
// keys as the Redis 7 key specs.
func TestLegacyKeysMatchKeySpecs(t *testing.T) {
	tab := New()
	for _, c := range tab.byID {
		if len(c.KeySpecs) == 0 {
			continue
		}
		checked := 0
		base := c.Arity
		if base < 0 {
			base = -base
		}
		for argc := base; argc <= base+5; argc++ {
			if !c.CheckArity(argc) {
				continue
			}
			// "1" is both a key name and a valid numkeys for the keynum specs.
			args := make([][]byte, argc)
			for i := range args {
				args[i] = []byte("1")
			}
			legacy := c.Keys(args, nil)
			spec, _, ok := c.KeysWithFlags(args, nil, nil)
			if !ok && c.Group == "scripting" && argc == base {
				// EVAL "1" "1": numkeys 1 with no key, which EVAL refuses
				// ("Number of keys can't be greater than number of args").
				continue
			}
			if !ok {
				t.Errorf("%s argc=%d: key specs not evaluable", c.FullName, argc)
				continue
			}
			slices.Sort(spec)
			spec = slices.Compact(spec)
			if c.Flags&FlagMovableKeys != 0 {
				// As in Redis, the legacy range of a movablekeys command
				// (ZUNIONSTORE's destination, nothing for BLMPOP) is only a
				// part of its keys: the key specs must cover it.
				for _, k := range legacy {
					if !slices.Contains(spec, k) {
						t.Errorf("%s argc=%d: legacy keys %v not among key-spec keys %v", c.FullName, argc, legacy, spec)
						break
					}
				}
			} else if !slices.Equal(legacy, spec) {
				t.Errorf("%s argc=%d: legacy keys %v, key-spec keys %v", c.FullName, argc, legacy, spec)
			}
			checked++
		}
		if checked == 0 {
			t.Errorf("%s: no argument count checked", c.FullName)
		}
	}
}

// Redis' ACL categories in the order Redis lists them (ACLCommandCategories).
var aclCategoryOrder = strings.Fields(`@keyspace @read @write @set @sortedset @list @hash @string
	@bitmap @hyperloglog @geo @stream @pubsub @admin @fast @slow @blocking @dangerous @connection
	@transaction @scripting`)

var groups = strings.Fields(`generic string list set sorted-set hash pubsub transactions connection
	server scripting hyperloglog cluster sentinel geo stream bitmap`)

func TestMetadataConsistent(t *testing.T) {
	tab := New()
	fast := map[string]bool{}
	for _, n := range wantFast {
		fast[n] = true
	}
	for _, c := range tab.byID {
		name := c.FullName
		if c.Parent == nil && c.FullName != c.Name || c.Parent != nil && c.FullName != c.Parent.Name+"|"+c.Name {
			t.Errorf("%s: FullName inconsistent with Name %q / Parent", name, c.Name)
		}
		minArgc := 1
		if c.Parent != nil {
			minArgc = 2
			if !slices.Contains(c.Parent.Subcommands, c) {
				t.Errorf("%s: parent does not list it", name)
			}
		}
		if a := max(c.Arity, -c.Arity); a < minArgc {
			t.Errorf("%s: arity %d counts fewer than %d names", name, c.Arity, minArgc)
		}
		if len(c.Subcommands) > 0 && c.Arity != -2 && c.Arity != -1 {
			t.Errorf("%s: container arity %d, want -2 (or -1 for COMMAND)", name, c.Arity)
		}
		// Legacy key positions.
		if c.FirstKey == 0 {
			if c.LastKey != 0 || c.Step != 0 {
				t.Errorf("%s: no first key but last=%d step=%d", name, c.LastKey, c.Step)
			}
		} else if c.Step <= 0 || (c.LastKey >= 0 && c.LastKey < c.FirstKey) {
			t.Errorf("%s: bad key range %d %d %d", name, c.FirstKey, c.LastKey, c.Step)
		}
		keyed := c.FirstKey > 0 || len(c.KeySpecs) > 0
		if keyed && (c.FirstKey == 0) != (len(c.KeySpecs) == 0) && c.Flags&FlagMovableKeys == 0 {
			// Redis reports first key 0 for commands whose keys all move
			// (BLMPOP, XREAD...); their key specs describe them.
			t.Errorf("%s: legacy range and key specs disagree about having keys", name)
		}
		// SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH describe their shard channels
		// with not_key specs (for cluster slot routing): no real keys.
		channelsOnly := len(c.KeySpecs) > 0
		for _, ks := range c.KeySpecs {
			channelsOnly = channelsOnly && ks.Flags == KeyNotKey
		}
		w, r := c.Flags&FlagWrite != 0, c.Flags&FlagReadonly != 0
		// WATCH reads its keys' versions but is neither write nor readonly;
		// EVAL, EVALSHA and FCALL are neither, as in Redis (their scripts decide).
		if keyed && !channelsOnly && name != "watch" && name != "eval" && name != "evalsha" && name != "fcall" && w == r {
			t.Errorf("%s: keyed command must be exactly one of write/readonly (write=%v readonly=%v)", name, w, r)
		}
		if w && r {
			t.Errorf("%s: both write and readonly", name)
		}
		if got := c.Flags&FlagFast != 0; got != fast[name] {
			t.Errorf("%s: fast = %v, Redis says %v", name, got, fast[name])
		}

		// ACL categories: known, in Redis' order, implicit ones present.
		last := -1
		for _, cat := range c.ACLCategories {
			i := slices.Index(aclCategoryOrder, cat)
			if i < 0 {
				t.Errorf("%s: unknown ACL category %q", name, cat)
			} else if i <= last {
				t.Errorf("%s: ACL categories %v out of Redis order", name, c.ACLCategories)
			}
			last = i
		}
		has := func(cat string) bool { return slices.Contains(c.ACLCategories, cat) }
		for _, imp := range []struct {
			flag bool
			cat  string
		}{
			{w, "@write"}, {r, "@read"}, {c.Flags&FlagFast != 0, "@fast"}, {c.Flags&FlagFast == 0, "@slow"},
			{c.Flags&FlagAdmin != 0, "@admin"}, {c.Flags&FlagAdmin != 0, "@dangerous"},
			{c.Flags&FlagBlocking != 0, "@blocking"}, {c.Flags&FlagPubSub != 0, "@pubsub"},
		} {
			if imp.flag && !has(imp.cat) && !(imp.cat == "@read" && c.Group == "scripting") { // EVAL_RO: readonly, not @read, in Redis
				t.Errorf("%s: flags imply %s, categories are %v", name, imp.cat, c.ACLCategories)
			}
		}
		if has("@fast") == has("@slow") {
			t.Errorf("%s: exactly one of @fast/@slow expected, got %v", name, c.ACLCategories)
		}

		// Docs.
		if c.Summary == "" || c.Since == "" || !slices.Contains(groups, c.Group) {
			t.Errorf("%s: summary %q since %q group %q", name, c.Summary, c.Since, c.Group)
		}
		if c.Parent != nil && c.Group != c.Parent.Group {
			t.Errorf("%s: group %q differs from parent's %q", name, c.Group, c.Parent.Group)
		}
		if (c.DocFlags&DocDeprecated != 0) != (c.DeprecatedSince != "") {
			t.Errorf("%s: deprecated flag and deprecated_since disagree", name)
		}

		// Key specs and the arguments that refer to them.
		for i, ks := range c.KeySpecs {
			if ks.BeginSearch.Type == 0 || ks.FindKeys.Type == 0 {
				t.Errorf("%s: key spec %d has no begin_search/find_keys type", name, i)
			}
			if ks.Flags&(KeyRO|KeyRW|KeyOW|KeyRM) == 0 && !channelsOnly {
				t.Errorf("%s: key spec %d has no RO/RW/OW/RM flag", name, i)
			}
			// A write command may read some keys (COPY's source is RO), but a
			// read-only command never writes any. PFCOUNT is Redis' one
			// exception: readonly, with an RW key spec, since it may write
			// the cached cardinality back (its key spec's notes say so).
			if r && ks.Flags&(KeyRW|KeyOW|KeyRM) != 0 && name != "pfcount" {
				t.Errorf("%s: readonly command with writing key spec %d", name, i)
			}
		}
		refs := map[int]bool{}
		var walk func(args []Arg)
		walk = func(args []Arg) {
			for _, a := range args {
				if a.Name == "" || a.Type.String() == "" {
					t.Errorf("%s: bad arg %+v", name, a)
				}
				if (a.Type == ArgOneOf || a.Type == ArgBlock) != (len(a.Args) > 0) {
					t.Errorf("%s: arg %q of type %s with %d sub-args", name, a.Name, a.Type, len(a.Args))
				}
				if a.Type == ArgPureToken && a.Token == "" && a.Name != "empty_string" { // MIGRATE's "" token
					t.Errorf("%s: pure-token arg %q without token", name, a.Name)
				}
				if a.Type == ArgKey || a.PatternKeys {
					if a.KeySpecIndex < 0 || a.KeySpecIndex >= len(c.KeySpecs) {
						t.Errorf("%s: arg %q refers to key spec %d of %d", name, a.Name, a.KeySpecIndex, len(c.KeySpecs))
					}
					refs[a.KeySpecIndex] = true
				}
				walk(a.Args)
			}
		}
		walk(c.Args)
		if len(refs) != len(c.KeySpecs) && !channelsOnly {
			t.Errorf("%s: %d key specs but key args refer to %v", name, len(c.KeySpecs), refs)
		}
	}
}

func TestFlagNames(t *testing.T) {
	f := FlagAllowBusy | FlagWrite | FlagFast | FlagDenyOOM | FlagProtected
	want := []string{"write", "denyoom", "fast", "allow_busy"} // protected is hidden, as in Redis
	if got := f.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := Flag(0).Names(); len(got) != 0 {
		t.Errorf("Flag(0).Names() = %v", got)
	}
	kf := KeyVariableFlags | KeyRW | KeyAccess | KeyUpdate
	if got := kf.Names(); !slices.Equal(got, []string{"RW", "access", "update", "variable_flags"}) {
		t.Errorf("KeyFlag.Names() = %v", got)
	}
	// Every defined flag except the hidden one has a name.
	for f := FlagWrite; f <= FlagAllowBusy; f <<= 1 {
		if n := f.Names(); len(n) != 1 && f != FlagProtected {
			t.Errorf("flag %#x has names %v", uint64(f), n)
		}
	}
}

// TestLookupEveryName looks up every top-level command by its name in
// lower, upper and mixed case, and a near miss of each (one byte changed,
// one byte more), against the table's own list.
func TestLookupEveryName(t *testing.T) {
	tab := New()
	for _, c := range tab.All() {
		upper := strings.ToUpper(c.Name)
		mixed := []byte(c.Name)
		mixed[0] = upper[0]
		for _, name := range []string{c.Name, upper, string(mixed)} {
			if got := tab.Lookup([]byte(name)); got != c {
				t.Errorf("Lookup(%q) = %v, want %q", name, got, c.Name)
			}
		}
		if got := tab.Lookup([]byte(c.Name + "x")); got != nil && got.Name != c.Name+"x" {
			t.Errorf("Lookup(%q) = %q", c.Name+"x", got.Name)
		}
		near := []byte(c.Name)
		near[len(near)-1] ^= 0x01
		if got := tab.Lookup(near); got != nil && got.Name != string(near) {
			t.Errorf("Lookup(%q) = %q", near, got.Name)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	tab := New()
	names := [][]byte{[]byte("GET"), []byte("set"), []byte("HSET"), []byte("zpopmin"), []byte("INCRBYFLOAT"), []byte("nosuch")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tab.Lookup(names[i%len(names)])
		i++
	}
}
