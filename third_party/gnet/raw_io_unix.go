// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gnet

import (
	"golang.org/x/sys/unix"

	gio "github.com/panjf2000/gnet/v2/pkg/io"
)

// sysRead, sysWrite and sysWritev are the read(2), write(2) and writev(2)
// of a loop's non-blocking sockets: without the runtime's system-call hooks
// (gio.RawRead ...) when el.rawIO, upstream's unix.Read, unix.Write and
// gio.Writev otherwise. el.rawIO is set with the poller's yield
// (wireYield): only where the loops may hold every P (pinned to one CPU:
// GOMAXPROCS 1, one loop). There, entersyscall and exitsyscall cost about
// 200 instructions per call and kept sysmon polling a P in a system call:
// without them the loop's process made a tenth of the futex calls and a
// fifth of the sysmon sleeps, and two-fifths fewer context switches, per request
// at pipeline 1. Where a P is spare (svcdb's defaults on 2 CPUs) the same
// change saved the instructions but raised the context switches per request
// by about a fifth (involuntary ones, of the threads the loop runs on), so
// there the loops keep upstream's calls (docs/performance.md of svcdb,
// "Socket reads and writes without the scheduler's hooks").
func (el *eventloop) sysRead(fd int, p []byte) (int, error) {
	if el.rawIO {
		return gio.RawRead(fd, p)
	}
	return unix.Read(fd, p)
}

func (el *eventloop) sysWrite(fd int, p []byte) (int, error) {
	if el.rawIO {
		return gio.RawWrite(fd, p)
	}
	return unix.Write(fd, p)
}

func (el *eventloop) sysWritev(fd int, bs [][]byte) (int, error) {
	if el.rawIO {
		return gio.RawWritev(fd, bs)
	}
	return gio.Writev(fd, bs)
}
