// Package lifecycle holds the server's lifecycle state in one atomic, so every
// part (the Redis port, health endpoints, shutdown) reads the same answer. It
// owns nothing else and never blocks.
package lifecycle

import "sync/atomic"

// State is where the server is in its life.
type State int32

// The states in the order a server goes through them. Draining and
// ShuttingDown are both "shutting down" in the published health table; the
// split is SPEC Part B's shutdown sequence: readiness turns 503 at once
// (Draining), liveness only once in-flight work is done and data is
// persisted (ShuttingDown), so an orchestrator does not kill a server that
// is still flushing replies.
const (
	Starting     State = iota // HTTP may be up, data loading, the Redis port not yet accepting
	Ready                     // accepting commands
	Draining                  // shutting down: refusing new work, finishing what is in flight
	ShuttingDown              // shutting down: in-flight work done, stopping what is left
)

func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Ready:
		return "ready"
	case Draining:
		return "draining"
	case ShuttingDown:
		return "shutting down"
	}
	return "unknown"
}

// Name is the state as machine-readable output spells it (JSON documents,
// metric labels): starting, ready, draining, shutting_down.
func (s State) Name() string {
	if s == ShuttingDown {
		return "shutting_down"
	}
	return s.String()
}

// Stopping reports whether the server is shutting down (either phase).
func (s State) Stopping() bool { return s >= Draining }

// Tracker is the single place the state lives. The zero value is Starting.
type Tracker struct{ state atomic.Int32 }

// Load returns the current state.
func (t *Tracker) Load() State { return State(t.state.Load()) }

// Set moves to s. Once shutting down, moving back to an earlier state is
// refused: it reports false.
func (t *Tracker) Set(s State) bool {
	for {
		cur := t.state.Load()
		if State(cur).Stopping() && s < State(cur) {
			return false
		}
		if t.state.CompareAndSwap(cur, int32(s)) {
			return true
		}
	}
}
