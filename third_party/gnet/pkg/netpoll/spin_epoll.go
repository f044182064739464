// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build linux && !poll_opt

package netpoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// begin times the start of a turn that ends with a spin (SetSpin): one
// clock read after a blocking wait returned events, none in a turn the
// back-off skips. A turn that a spin found starts at the spin's last read.
func (p *Poller) begin() {
	if p.spin.due() {
		p.spin.start = p.spin.now()
	}
}

// spinPoll is the spin at the end of a turn (SetSpin): it polls with a zero
// timeout until an event is ready or the spin's credit is spent, and
// returns how many events it put in events (0: none, block). Each poll is
// followed by one clock read; the spin ends past its deadline by at most
// one poll.
func (p *Poller) spinPoll(events []epollevent) int {
	s := &p.spin
	if s.skipped() {
		return 0
	}
	t0 := s.now()
	budget := s.earn(t0 - s.start)
	if budget == 0 {
		return 0
	}
	for {
		n := epollPoll(p.fd, events)
		now := s.now()
		if n > 0 {
			s.start = now
			s.spent(now-t0, true)
			return n
		}
		if now-t0 >= budget {
			s.spent(now-t0, false)
			return 0
		}
	}
}

// epollPoll is epoll_wait with a zero timeout, made with RawSyscall6: it
// never blocks, so the scheduler's system-call hooks (entersyscall,
// exitsyscall) would only cost instructions, on every poll of a spin
// (poll_opt's epollWait does the same for a zero timeout). epoll_pwait
// with no signal mask is epoll_wait, and exists on every Linux
// architecture. An error (EINTR) counts as no event.
func epollPoll(epfd int, events []epollevent) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}
