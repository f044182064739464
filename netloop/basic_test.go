package netloop_test

import (
	"testing"

	"github.com/svcdb/svcdb/shard"
)

func strategies() []shard.Strategy { return []shard.Strategy{shard.RunToCompletion, shard.Dedicated} }

func TestPingSetGet(t *testing.T) {
	for _, st := range strategies() {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st))
			c := dialRaw(t, ts.Addr)
			if v := c.do("PING"); v.Type != '+' || string(v.Str) != "PONG" {
				t.Fatalf("PING: %v", v)
			}
			if v := c.do("SET", "k", "v"); string(v.Str) != "OK" {
				t.Fatalf("SET: %v", v)
			}
			if v := c.do("GET", "k"); string(v.Str) != "v" {
				t.Fatalf("GET: %v", v)
			}
		})
	}
}
