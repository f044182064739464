package keyspace

import (
	"fmt"
	"testing"

	"github.com/svcdb/svcdb/core/command"
)

// TestRouteOneKeyFastPath checks route's shortcut for commands whose legacy
// key positions name one key against the general walk it skips: every
// top-level command of the table routed by its key positions, with
// argument counts from its arity up, on keys with and without hash tags,
// gets the same shard and kind both ways.
func TestRouteOneKeyFastPath(t *testing.T) {
	table := command.New()
	hs := Handlers{}
	for _, cmd := range table.All() {
		if cmd.FirstKey > 0 && cmd.Flags&command.FlagMovableKeys == 0 {
			hs[cmd.Name] = HandlerSpec{func(*Ctx) {}, RouteKeys}
		}
	}
	env, _, err := NewEnv(16, table, hs)
	if err != nil {
		t.Fatal(err)
	}
	fast := 0
	for name := range hs {
		cmd := table.Lookup([]byte(name))
		rr := &env.routes[cmd.ID]
		want := cmd.LastKey == cmd.FirstKey && cmd.Flags&command.FlagBlocking == 0
		if rr.oneKey != want {
			t.Errorf("%s: oneKey %v; want %v", name, rr.oneKey, want)
		}
		if !rr.oneKey {
			continue
		}
		fast++
		for argc := max(cmd.Arity, -cmd.Arity, cmd.FirstKey+1); argc <= cmd.FirstKey+4; argc++ {
			for _, key := range []string{"k", "key:000042", "{tag}:a", "x{}y", "{a}{b}"} {
				args := make([][]byte, argc)
				for i := range args {
					args[i] = fmt.Appendf(nil, "%s:%d", key, i)
				}
				args[cmd.FirstKey] = []byte(key)
				var c Ctx
				shard, where := env.RouteFor(&c, cmd, args)
				rr.oneKey = false
				var slow Ctx
				wantShard, wantWhere := env.RouteFor(&slow, cmd, args)
				rr.oneKey = true
				if shard != wantShard || where != wantWhere || c.route.hint != slow.route.hint {
					t.Errorf("%s %q (%d args): %d/%v hint %+v; the walk gives %d/%v hint %+v",
						name, key, argc, shard, where, c.route.hint, wantShard, wantWhere, slow.route.hint)
				}
			}
		}
	}
	for _, name := range []string{"get", "set", "incr", "zpopmin"} {
		if cmd := table.Lookup([]byte(name)); !env.routes[cmd.ID].oneKey {
			t.Errorf("%s does not take the one-key route", name)
		}
	}
	for _, name := range []string{"mset", "del", "blpop", "rename"} {
		if cmd := table.Lookup([]byte(name)); env.routes[cmd.ID].oneKey {
			t.Errorf("%s takes the one-key route", name)
		}
	}
	if fast < 50 {
		t.Errorf("%d commands take the one-key route; want most single-key commands", fast)
	}
}
