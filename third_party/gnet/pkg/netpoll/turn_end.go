// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package netpoll

// SetTurnEnd makes Polling call f at the end of each turn: after the callbacks
// of a batch of events returned by one epoll_wait (kevent) and after the queued
// tasks that batch ran, before the next wait. f is not called after a wait that
// returned no event. f runs on the polling goroutine; set it before Polling
// starts.
func (p *Poller) SetTurnEnd(f func()) { p.turnEnd = f }
