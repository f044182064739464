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

// TestSpinCredit: turns earn a quarter of their busy time, up to the
// setting; a spin waits for the credit to reach spinMin and spends what it
// took, hit or miss.
func TestSpinCredit(t *testing.T) {
	var p Poller
	p.SetSpin(50 * time.Microsecond)
	s := &p.spin
	if !s.due() {
		t.Fatal("a fresh spinner is not due")
	}
	if b := s.earn(4 * us); b != 0 {
		t.Fatalf("1 us of credit: spin %d, want none under spinMin", b)
	}
	if b := s.earn(4 * us); b != 2*us {
		t.Fatalf("2 us of credit: spin %d", b)
	}
	s.spent(500, true)
	if s.credit != 1500 || s.shift != spinShiftMin {
		t.Fatalf("after a hit of 0.5 us: credit %d shift %d", s.credit, s.shift)
	}
	if b := s.earn(1000 * us); b != 50*us {
		t.Fatalf("a long turn: spin %d, want the 50 us cap", b)
	}
	s.spent(51*us, false) // the poll that crossed the deadline
	if s.credit != -us || s.shift != spinShiftMin+1 {
		t.Fatalf("after a miss: credit %d shift %d", s.credit, s.shift)
	}
	var off Poller
	off.SetSpin(0)
	if off.spin.due() {
		t.Fatal("spin 0 is due")
	}
}

// TestSpinBackOff: misses halve the earning rate down to 1/32, then skip
// 2, 4 ... 64 turns between tries; a hit doubles it and ends the back-off.
func TestSpinBackOff(t *testing.T) {
	var p Poller
	p.SetSpin(time.Millisecond)
	s := &p.spin
	const busy = 256 * us
	for want := int64(busy / 4); want >= busy/32; want /= 2 {
		if s.skipped() {
			t.Fatal("skipped before the rate reached 1/32")
		}
		if b := s.earn(busy); b != want {
			t.Fatalf("spin %d, want %d", b, want)
		}
		s.spent(want, false)
	}
	for _, skip := range []int{2, 4, 8, 16, 32, 64, 64} {
		for i := 0; i < skip; i++ {
			if s.due() || !s.skipped() {
				t.Fatalf("skip %d: turn %d due", skip, i)
			}
		}
		if !s.due() || s.skipped() {
			t.Fatalf("skip %d: one turn too many", skip)
		}
		if b := s.earn(busy); b != busy/32 {
			t.Fatalf("after skipping %d: spin %d, want busy/32", skip, b)
		}
		s.spent(busy/32, false)
	}
	for s.skipped() {
	}
	for _, want := range []int64{busy / 32, busy / 16, busy / 8, busy / 4, busy / 4} {
		if b := s.earn(busy); b != want {
			t.Fatalf("growing: spin %d, want %d", b, want)
		}
		s.spent(want, true)
		if s.skipped() {
			t.Fatal("a hit left a back-off")
		}
	}
}

// TestSpinBound: whatever the turns and whatever the spins find, the time
// spent spinning stays within a quarter of the busy time plus one poll per
// spin (the bound SetSpin documents), spins running to their budget and
// one poll past it when they miss.
func TestSpinBound(t *testing.T) {
	for _, hitEvery := range []uint32{1, 2, 3, 10, 1 << 30} {
		var p Poller
		p.SetSpin(50 * time.Microsecond)
		s := &p.spin
		var spun, worked, spins int64
		x := uint32(1)
		for i := 0; i < 200000; i++ {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			turn := int64(x%40) * us
			worked += turn
			if s.skipped() {
				continue
			}
			b := s.earn(turn)
			if b == 0 {
				continue
			}
			hit := x%hitEvery == 0
			d := b + us // a miss runs one 1 us poll past its budget
			if hit {
				d = int64(x) % b // a hit comes somewhere inside it
			}
			spun += d
			spins++
			s.spent(d, hit)
		}
		if spun > worked/4+us {
			t.Errorf("hits 1/%d: spun %d ns for %d ns of work, over a quarter", hitEvery, spun, worked)
		}
		t.Logf("hits 1/%d: %d spins, spun %.2f%% of the busy time", hitEvery, spins, 100*float64(spun)/float64(worked))
	}
}

// TestSpinPoll: over a real epoll instance, a spin returns at once with an
// event that is ready, and without one spends its credit (no more than one
// poll past it) and then reports a miss.
func TestSpinPoll(t *testing.T) {
	p, err := OpenPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetSpin(time.Millisecond)
	events := make([]epollevent, 8)

	// A turn of 400 us with nothing ready: a spin of 100 us or more, a miss.
	p.begin()
	p.spin.start -= 400 * us
	t0 := time.Now()
	if n := p.spinPoll(events); n != 0 {
		t.Fatalf("nothing ready: %d events", n)
	}
	if d := time.Since(t0); d < 100*time.Microsecond {
		t.Fatalf("the spin lasted %v, under its 100 us credit", d)
	}
	if p.spin.shift != spinShiftMin+1 || p.spin.credit > 0 {
		t.Fatalf("after a miss: shift %d credit %d", p.spin.shift, p.spin.credit)
	}

	// The eventfd readable: the spin finds it, a hit, the next turn timed
	// from then.
	if _, err := unix.Write(p.efd, b); err != nil {
		t.Fatal(err)
	}
	p.spin.start -= 800 * us
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
