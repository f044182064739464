// Package lifecycle holds the server's lifecycle state in one atomic, so every
// part (the Redis port, health endpoints, shutdown) reads the same answer. It
// owns nothing else and never blocks.
package lifecycle

import "sync/atomic"

// State is where the server is in its life.
type State int32

const (
	Starting     State = iota // HTTP may be up, data loading, the Redis port not yet accepting
	Ready                     // accepting commands
	ShuttingDown              // refusing new work, finishing what is in flight
)

func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Ready:
		return "ready"
	case ShuttingDown:
		return "shutting down"
	}
	return "unknown"
}

// Tracker is the single place the state lives. The zero value is Starting.
type Tracker struct{ state atomic.Int32 }

// Load returns the current state.
func (t *Tracker) Load() State { return State(t.state.Load()) }

// Set moves to s. Moving back from ShuttingDown is refused: it reports false.
func (t *Tracker) Set(s State) bool {
	for {
		cur := t.state.Load()
		if State(cur) == ShuttingDown && s != ShuttingDown {
			return false
		}
		if t.state.CompareAndSwap(cur, int32(s)) {
			return true
		}
	}
}
