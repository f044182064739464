// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package netpoll

import "time"

// SetYield says what Polling does when it runs out of events. With yield
// (the default, upstream's behaviour) it polls once more with a zero timeout
// after every batch, and when that finds nothing it calls runtime.Gosched
// before it blocks: the other goroutines of its P run before the loop holds
// the P in a blocking system call. Without yield it blocks at once (a wait
// with events ready returns at once, so the zero-timeout poll only cost a
// system call) and calls Gosched before a wait only when its last call is
// yieldEvery old, whether the wait would block or not.
//
// Yield only when the loops may hold every P. Where a P is spare, whatever
// the loop readies is run by that P's thread anyway, and Gosched costs a
// futex wake-up of an idle thread (goschedImpl calls wakep) that finds
// nothing to do and sleeps again: on 2 CPUs with one loop, one wake-up for
// nearly every wait (docs/performance.md, "Defaults mode on two cores").
// Set it before Polling starts.
func (p *Poller) SetYield(yield bool) { p.noYield = !yield }

// yieldEvery is how often a Poller without yield still calls
// runtime.Gosched before a blocking wait. The scheduler counts a goroutine
// that never yields as running since its last yield, system calls included,
// and sysmon preempts one that has run 10 ms (forcePreemptNS): it takes the
// P from under a blocked wait, and keeps ticking every 20 us instead of
// backing off to 10 ms while it does. Without these yields a busy loop was
// preempted about 380 times a second and sysmon woke 1,700 times. Each yield
// still costs a wake-up, and often moves the loop to the woken thread (the
// yielding one finds nothing and sleeps): half of sysmon's 10 ms keeps them
// few and the loop's time since its last yield under 10 ms while it works.
const yieldEvery = 5 * time.Millisecond

// yieldDue reports whether Polling, without yield, calls runtime.Gosched
// before its next wait. It costs a clock read (vDSO) a turn.
func (p *Poller) yieldDue() bool {
	if !p.noYield {
		return false
	}
	now := time.Now()
	if now.Sub(p.lastYield) < yieldEvery {
		return false
	}
	p.lastYield = now
	return true
}
