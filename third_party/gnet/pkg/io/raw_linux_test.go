// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

package io

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// socketPair returns both ends of a non-blocking stream socket pair.
func socketPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fds[0]); _ = unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// TestRawCallsReturnWhatUnixReturns checks RawRead, RawWrite and RawWritev
// against unix.Read, unix.Write and unix.Writev on the same sockets: data,
// an empty buffer, EAGAIN on an empty and on a full socket (n -1 both),
// end of stream and EPIPE.
func TestRawCallsReturnWhatUnixReturns(t *testing.T) {
	a, b := socketPair(t)
	buf := make([]byte, 64)

	n, err := RawRead(a, buf)
	un, uerr := unix.Read(a, buf)
	if n != -1 || err != unix.EAGAIN || n != un || err != uerr {
		t.Fatalf("empty socket: RawRead %d %v, unix.Read %d %v", n, err, un, uerr)
	}
	if n, err = RawWrite(b, []byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write: %d %v", n, err)
	}
	if n, err = RawWrite(b, nil); n != 0 || err != nil {
		t.Fatalf("Write of nothing: %d %v", n, err)
	}
	if n, err = RawWritev(b, nil); n != 0 || err != nil {
		t.Fatalf("Writev of nothing: %d %v", n, err)
	}
	// More buffers than writev's stack array, empty ones among them.
	iov := [][]byte{[]byte(" "), nil, []byte("w"), []byte("o"), {}, []byte("r"), []byte("l"), []byte("d"), []byte(","), []byte(" "), []byte("again")}
	if n, err = RawWritev(b, iov); n != 13 || err != nil {
		t.Fatalf("Writev: %d %v", n, err)
	}
	if n, err = RawRead(a, buf); err != nil || string(buf[:n]) != "hello world, again" {
		t.Fatalf("Read: %d %v", n, err)
	}

	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for err == nil {
		_, err = RawWrite(b, chunk)
	}
	_, uerr = unix.Write(b, chunk)
	if err != unix.EAGAIN || uerr != unix.EAGAIN {
		t.Fatalf("full socket: Write %v, unix.Write %v", err, uerr)
	}
	if n, err = RawWritev(b, [][]byte{chunk, chunk}); n != -1 || err != unix.EAGAIN {
		t.Fatalf("full socket: Writev %d %v", n, err)
	}

	_ = unix.Shutdown(b, unix.SHUT_WR)
	for err == nil || err == unix.EAGAIN {
		if n, err = RawRead(a, chunk); n == 0 && err == nil {
			break
		}
	}
	if n != 0 || err != nil {
		t.Fatalf("end of stream: Read %d %v, want 0 <nil>", n, err)
	}
	_ = unix.Shutdown(a, unix.SHUT_RD)
	_ = unix.Close(a)
	if n, err = RawWrite(b, []byte("x")); n != -1 || err != unix.EPIPE {
		t.Fatalf("closed peer: Write %d %v, want -1 EPIPE", n, err)
	}
}

// TestRawCallsAllocateNothing: the loops call these once per read and
// write; RawWritev of up to stackIovecs buffers builds its iovecs on the stack.
func TestRawCallsAllocateNothing(t *testing.T) {
	a, b := socketPair(t)
	buf := make([]byte, 64)
	iov := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = RawWrite(b, []byte("x"))
		_, _ = RawWritev(b, iov)
		_, _ = RawRead(a, buf)
		_, _ = RawRead(a, buf) // EAGAIN
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}
