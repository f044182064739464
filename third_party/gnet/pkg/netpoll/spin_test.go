// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build linux && !poll_opt

package netpoll

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const us = int64(time.Microsecond)

// TestSpinBudget: a spin lasts at most a quarter of the turn's busy time,
// capped at the setting; a turn too short to earn spinMin does not spin.
func TestSpinBudget(t *testing.T) {
	var p Poller
	p.SetSpin(50 * time.Microsecond)
	s := &p.spin
	if !s.due() {
		t.Fatal("a fresh spinner is not due")
	}
	if b := s.budget(100 * us); b != 25*us {
		t.Fatalf("budget(100 us) = %d, want a quarter", b)
	}
	if b := s.budget(1000 * us); b != 50*us {
		t.Fatalf("budget(1 ms) = %d, want the 50 us cap", b)
	}
	if b := s.budget(4 * us); b != 0 {
		t.Fatalf("budget(4 us) = %d, want none (1 us < spinMin)", b)
	}
	if s.shift != spinShiftMin+1 {
		t.Fatalf("a turn too short to spin counts as a miss: shift %d", s.shift)
	}
	var off Poller
	off.SetSpin(0)
	if off.spin.due() {
		t.Fatal("spin 0 is due")
	}
}

// TestSpinBackOff: misses halve the fraction down to 1/32, then skip 2, 4
// ... 64 turns between tries; a hit doubles the fraction and ends the
// back-off. Under every sequence the spin's total stays within a quarter
// of the busy time (the bound SetSpin documents).
func TestSpinBackOff(t *testing.T) {
	var p Poller
	p.SetSpin(time.Millisecond)
	s := &p.spin
	const busy = 1000 * us
	for want := int64(busy / 4); want >= busy/32; want /= 2 {
		if s.skipped() {
			t.Fatal("skipped before the fraction reached 1/32")
		}
		if b := s.budget(busy); b != want {
			t.Fatalf("budget %d, want %d", b, want)
		}
		s.result(false)
	}
	// Misses at 1/32: skip 2, 4, 8 ... 64 turns, then stay at 64.
	for _, skip := range []int{2, 4, 8, 16, 32, 64, 64} {
		for i := 0; i < skip; i++ {
			if !s.skipped() || s.due() != (i == skip-1) {
				t.Fatalf("skip %d: turn %d not skipped (or due too early)", skip, i)
			}
		}
		if s.skipped() {
			t.Fatalf("skip %d: one turn too many", skip)
		}
		if b := s.budget(busy); b != busy/32 {
			t.Fatalf("after skipping %d: budget %d, want busy/32", skip, b)
		}
		s.result(false)
	}
	// Hits grow the fraction back to a quarter, no further.
	for s.skipped() {
	}
	for _, want := range []int64{busy / 32, busy / 16, busy / 8, busy / 4, busy / 4} {
		if b := s.budget(busy); b != want {
			t.Fatalf("growing: budget %d, want %d", b, want)
		}
		s.result(true)
		if s.skipped() {
			t.Fatal("a hit left a back-off")
		}
	}

	// The bound: random hits and misses, spins as long as their budget.
	var q Poller
	q.SetSpin(time.Millisecond)
	s = &q.spin
	var spun, worked int64
	x := uint32(1)
	for i := 0; i < 100000; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		turn := int64(x%400) * us
		worked += turn
		if s.skipped() {
			continue
		}
		b := s.budget(turn)
		spun += b
		if b > 0 {
			s.result(x%3 == 0)
		}
	}
	if spun*4 > worked {
		t.Fatalf("spun %d ns for %d ns of work: over a quarter", spun, worked)
	}
	t.Logf("a third of the spins hit: spun %.1f%% of the busy time", 100*float64(spun)/float64(worked))
}

// TestSpinPoll: over a real epoll instance, a spin returns at once with an
// event that is ready, and without one spends its budget (no more than one
// poll past it) and then reports a miss.
func TestSpinPoll(t *testing.T) {
	p, err := OpenPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetSpin(time.Millisecond)
	events := make([]epollevent, 8)

	// A turn of 400 us with nothing ready: a spin of about 100 us, a miss.
	p.begin()
	p.spin.start -= 400 * us
	t0 := time.Now()
	if n := p.spinPoll(events); n != 0 {
		t.Fatalf("nothing ready: %d events", n)
	}
	if d := time.Since(t0); d < 100*time.Microsecond {
		t.Fatalf("the spin lasted %v, under its 100 us budget", d)
	}
	if p.spin.shift != spinShiftMin+1 {
		t.Fatalf("shift %d after a miss", p.spin.shift)
	}

	// The eventfd readable: the spin finds it, a hit, the next turn timed
	// from then.
	if _, err := unix.Write(p.efd, b); err != nil {
		t.Fatal(err)
	}
	p.spin.start -= 400 * us
	if n := p.spinPoll(events); n != 1 || int(events[0].Fd) != p.efd {
		t.Fatalf("eventfd ready: %d events", n)
	}
	if p.spin.shift != spinShiftMin || p.spin.now()-p.spin.start > int64(time.Second) {
		t.Fatalf("after a hit: shift %d, start %d", p.spin.shift, p.spin.start)
	}
}

// TestSpinAllocatesNothing: the spin runs at the end of every turn.
func TestSpinAllocatesNothing(t *testing.T) {
	p, err := OpenPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetSpin(50 * time.Microsecond)
	events := make([]epollevent, 8)
	if allocs := testing.AllocsPerRun(100, func() {
		p.begin()
		_ = p.spinPoll(events)
	}); allocs != 0 {
		t.Fatalf("%v allocations per turn", allocs)
	}
}
