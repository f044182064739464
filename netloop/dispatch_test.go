package netloop

import (
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard"
)

// TestLocalDispatchChecked: the connection and server commands' table is
// complete for the real command table, and a command left without a handler
// fails the start-up check (New records it, Start returns it), so "known
// but not implemented" cannot reach a client.
func TestLocalDispatchChecked(t *testing.T) {
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 2}, table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buildLocal(table, rt, localHandlers()); err != nil {
		t.Fatalf("the real handlers fail the check: %v", err)
	}
	for _, name := range []string{"echo", "memory", "client"} {
		named := localHandlers()
		delete(named, name)
		_, err := buildLocal(table, rt, named)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("without %s: err = %v, want it named", name, err)
		}
	}
	named := localHandlers()
	named["nosuchcommand"] = named["echo"]
	if _, err := buildLocal(table, rt, named); err == nil || !strings.Contains(err.Error(), "nosuchcommand") {
		t.Fatalf("a handler for an unknown command: err = %v", err)
	}
	// A shard command needs no local handler.
	if rt.MayRouteLocal(table.Lookup([]byte("get"))) {
		t.Fatal("GET may route locally")
	}

	s := New(Config{}, table, rt)
	s.localErr = nil
	named = localHandlers()
	delete(named, "time")
	s.localByID, s.localErr = buildLocal(table, rt, named)
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "time") {
		if err == nil {
			_ = s.Stop(t.Context())
		}
		t.Fatalf("Start with TIME unhandled: err = %v", err)
	}
}
