package scripting

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// killSwitch is the VM's context (gopher-lua checks its Done channel
// before every instruction): Engine.Kill closes the channel, which makes
// every following instruction raise, so a pcall in the script cannot
// swallow the kill (Redis re-arms its hook on every line for the same
// reason). A channel is made again only after a kill: runs allocate
// nothing for it.
type killSwitch struct {
	done   atomic.Pointer[chan struct{}]
	mu     sync.Mutex // Kill against the reset at the next run
	killed atomic.Bool
}

var errKilled = errors.New("script killed")

func (k *killSwitch) init() {
	ch := make(chan struct{})
	k.done.Store(&ch)
}

func (k *killSwitch) Deadline() (time.Time, bool) { return time.Time{}, false }
func (k *killSwitch) Done() <-chan struct{}       { return *k.done.Load() }
func (k *killSwitch) Value(any) any               { return nil }
func (k *killSwitch) Err() error {
	if k.killed.Load() {
		return errKilled
	}
	return nil
}

// kill closes the channel once.
func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.killed.Swap(true) {
		close(*k.done.Load())
	}
}

// rearm gives the next run an open channel after a kill.
func (k *killSwitch) rearm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed.Swap(false) {
		ch := make(chan struct{})
		k.done.Store(&ch)
	}
}

// Kill stops the running script at its next instruction; it replies
// "ERR Script killed by user with SCRIPT KILL...". Whether it may be killed
// (it has not written) is the caller's decision, as is whether one runs.
// Safe to call from any goroutine.
func (e *Engine) Kill() { e.vm.kill.kill() }
