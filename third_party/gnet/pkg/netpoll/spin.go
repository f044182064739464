// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package netpoll

import "time"

// SetSpin makes Polling, after a turn that handled events, poll again with
// a zero timeout for a while before it blocks, so that a client's next
// request finds the loop awake: its write then wakes no sleeping thread (a
// cross-CPU wake-up, an IPI and, on a VM, an exit, paid by the client) and
// the loop does not go to sleep and wake up for it. longest is the longest
// spin; 0 (the default) turns spinning off. Only the epoll poller without
// poll_opt (poller_epoll_default.go, what svcdb builds) spins; the others
// keep the setting and ignore it. Set it before Polling starts.
//
// The spin is adaptive and its cost bounded (spinner): spins spend a
// credit that turns earn at a quarter of their busy time at most, so
// spinning never takes more than a quarter of the loop's useful work (plus
// one zero-timeout poll), and it shrinks to nothing while spins find no
// event.
func (p *Poller) SetSpin(longest time.Duration) {
	p.spin = spinner{max: int64(longest), shift: spinShiftMin, base: time.Now()}
}

const (
	// spinShiftMin and spinShiftMax bound spinner.shift: a turn earns
	// busy>>shift of spin, a quarter down to a 32nd of its busy time.
	spinShiftMin = 2
	spinShiftMax = 5
	// spinMissesMax bounds the back-off once spins at spinShiftMax keep
	// missing: the loop skips 2, 4 ... 2^spinMissesMax turns between tries.
	spinMissesMax = 6
	// spinMin is the shortest spin worth a try: a few zero-timeout
	// epoll_wait calls on a VM. The loop spins once its credit reaches it.
	spinMin = int64(2 * time.Microsecond)
)

// spinner is the state of a Poller's spin. Its methods are pure (the clock
// is read by the caller) and called on the polling goroutine only.
//
// The rules: each timed turn earns busy>>shift ns of credit, capped at
// max; once the credit reaches spinMin the turn's end spins for up to the
// credit and the spin's length, hit or miss, is taken from it (the one
// poll that crosses the deadline may leave it a little below zero, repaid
// by the next turns). So over any run of turns, time spinning <= credit
// earned + one poll <= busy time / 4 + one poll. A spin that finds an
// event doubles the earning rate (up to 1/4) and ends any back-off; one
// that finds nothing halves it (down to 1/32); a miss at 1/32 skips the
// next 2^k turns, k growing by one with each such miss in a row (up to 2^6
// = 64 turns), with no clock read and nothing earned in them. So where
// requests come too far apart for a spin to catch them, the loop tries a
// short spin every 65 turns at most; where they come back to back, it
// keeps a credit of up to max to wait for the next one.
type spinner struct {
	max    int64     // longest spin and most credit, ns; 0: off
	base   time.Time // origin of now (monotonic: time.Since reads one clock)
	start  int64     // now() when the current turn started, if it was due
	credit int64     // ns of spin earned and not yet spent
	shift  uint8     // a turn earns busy>>shift
	misses uint8     // misses in a row at spinShiftMax
	skip   uint8     // turns left whose end does not spin
}

// now is the monotonic clock in ns since s.base: one vDSO clock read.
func (s *spinner) now() int64 { return int64(time.Since(s.base)) }

// due reports whether the turn about to start is timed (begin), i.e. not
// skipped by the back-off. Called once per turn.
func (s *spinner) due() bool { return s.max > 0 && s.skip == 0 }

// skipped reports whether the turn just finished is left out (the
// back-off), counting it down. Called at the end of each turn when
// spinning is on, before any clock read.
func (s *spinner) skipped() bool {
	if s.skip > 0 {
		s.skip--
		return true
	}
	return false
}

// earn adds a turn of busy ns to the credit and returns how long the spin
// after it may last: the credit, or 0 for no spin while it is under
// spinMin.
func (s *spinner) earn(busy int64) int64 {
	s.credit += busy >> s.shift
	if s.credit > s.max {
		s.credit = s.max
	}
	if s.credit < spinMin {
		return 0
	}
	return s.credit
}

// spent records a spin of d ns and whether it found an event (hit).
func (s *spinner) spent(d int64, hit bool) {
	s.credit -= d
	if hit {
		if s.shift > spinShiftMin {
			s.shift--
		}
		s.misses = 0
		return
	}
	if s.shift < spinShiftMax {
		s.shift++
		return
	}
	if s.misses < spinMissesMax {
		s.misses++
	}
	s.skip = 1 << s.misses
}
