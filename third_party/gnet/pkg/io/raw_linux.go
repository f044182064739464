// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

package io

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// RawRead, RawWrite and RawWritev are read(2), write(2) and writev(2) on a
// non-blocking socket, made with unix.RawSyscall: without the runtime's
// entersyscall and exitsyscall, which let sysmon hand the P to another
// thread while a system call may block. A non-blocking socket's call never
// blocks (it returns EAGAIN instead), so the hooks only cost instructions
// and the scheduler work they cause, twice per request at pipeline 1;
// epoll_wait with a timeout, which blocks, keeps unix.Syscall in
// pkg/netpoll. A blocking descriptor must never be passed here: its thread
// would hold its P, invisible to the scheduler, for as long as it blocks.
// The event loops call them only where no P is spare (eventloop.rawIO, in
// the module's root, says when and why).
//
// Each returns what unix.Read, unix.Write and unix.Writev return: n is -1
// with an error (unix.EAGAIN, unix.EINTR ... as unix.Errno), and n bytes
// with a nil error. What they leave out is the race detector's annotations
// of the bytes read and written (unix.Read's raceWriteRange): the loops'
// buffers are never shared with another goroutine through a socket.

// RawRead calls read(2) on the non-blocking descriptor fd without the
// scheduler's system-call hooks.
func RawRead(fd int, p []byte) (int, error) {
	ptr := unsafe.Pointer(&_zero)
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// RawWrite calls write(2) on the non-blocking descriptor fd without the
// scheduler's system-call hooks.
func RawWrite(fd int, p []byte) (int, error) {
	ptr := unsafe.Pointer(&_zero)
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// stackIovecs is how many buffers RawWritev passes from an array on its
// stack; more cost an allocation (unix.Writev's minIovec is also 8).
const stackIovecs = 8

// RawWritev calls writev(2) on the non-blocking descriptor fd without the
// scheduler's system-call hooks.
func RawWritev(fd int, bs [][]byte) (int, error) {
	if len(bs) == 0 {
		return 0, nil
	}
	var stack [stackIovecs]unix.Iovec
	iov := stack[:0]
	for _, b := range bs {
		v := unix.Iovec{Base: (*byte)(unsafe.Pointer(&_zero))}
		if len(b) > 0 {
			v.Base = &b[0]
		}
		v.SetLen(len(b))
		iov = append(iov, v)
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}

// _zero is what an empty buffer's pointer points at, as in unix.Read.
var _zero uintptr
