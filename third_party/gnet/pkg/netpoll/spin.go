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
// The spin is adaptive and its cost bounded (spinner): it lasts at most a
// quarter of the busy time of the turn just finished (plus the one
// zero-timeout poll that crosses the deadline), so spinning never takes
// more than a quarter of the loop's useful work, and it shrinks to nothing
// while spins find no event.
func (p *Poller) SetSpin(longest time.Duration) {
	p.spin = spinner{max: int64(longest), shift: spinShiftMin, base: time.Now()}
}

const (
	// spinShiftMin and spinShiftMax bound spinner.shift: a spin lasts at
	// most busy>>shift, a quarter down to a 32nd of the turn's busy time.
	spinShiftMin = 2
	spinShiftMax = 5
	// spinMissesMax bounds the back-off once spins at busy>>spinShiftMax
	// keep missing: the loop skips 2, 4 ... 2^spinMissesMax turns between
	// tries.
	spinMissesMax = 6
	// spinMin is the shortest spin worth a try: about two zero-timeout
	// epoll_wait calls on a VM. A turn too short to earn it counts as a
	// miss.
	spinMin = int64(2 * time.Microsecond)
)

// spinner is the state of a Poller's spin: how long the next spin may
// last, as a fraction of the turn's busy time, and the back-off. Its
// methods are pure (the clock is read by the caller) and called on the
// polling goroutine only.
//
// The rules: a spin that finds an event doubles the fraction (up to 1/4)
// and ends any back-off; one that finds nothing halves it (down to 1/32);
// a miss at 1/32 skips the next 2^k turns' spins, k growing by one with
// each such miss in a row (up to 2^6 = 64 turns). So where requests come
// too far apart for a spin to catch them, the loop tries one spin of at
// most 1/32 of a turn's busy time every 65 turns, and reads no clock in
// the turns between; where they come back to back, it spins up to a
// quarter of each turn.
type spinner struct {
	max    int64     // longest spin in ns; 0: off
	base   time.Time // origin of now (monotonic: time.Since reads one clock)
	start  int64     // now() when the current turn started, if it was due
	shift  uint8     // the next spin lasts at most busy>>shift
	misses uint8     // misses in a row at spinShiftMax
	skip   uint8     // turns left whose end does not spin
}

// now is the monotonic clock in ns since s.base: one vDSO clock read.
func (s *spinner) now() int64 { return int64(time.Since(s.base)) }

// due reports whether the turn about to start ends with a spin, so that
// Polling times its start (begin). Called once per turn.
func (s *spinner) due() bool { return s.max > 0 && s.skip == 0 }

// skipped reports whether the turn just finished ends without a spin (the
// back-off), counting it down. Called at the end of each turn when
// spinning is on, before any clock read.
func (s *spinner) skipped() bool {
	if s.skip > 0 {
		s.skip--
		return true
	}
	return false
}

// budget returns how long the spin after a turn of busy ns may last, 0 for
// none (a turn too short to earn spinMin, counted as a miss).
func (s *spinner) budget(busy int64) int64 {
	b := busy >> s.shift
	if b > s.max {
		b = s.max
	}
	if b < spinMin {
		s.result(false)
		return 0
	}
	return b
}

// result records what a spin found: an event (hit) or nothing.
func (s *spinner) result(hit bool) {
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
