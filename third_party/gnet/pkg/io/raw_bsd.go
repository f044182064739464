// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package io

import "golang.org/x/sys/unix"

// RawRead is unix.Read: the raw system calls of Linux (raw_linux.go) are
// not made here, Darwin's direct system calls being deprecated.
func RawRead(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

// RawWrite is unix.Write, as RawRead is unix.Read.
func RawWrite(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

// RawWritev is Writev (already a raw system call here, as upstream has it).
func RawWritev(fd int, bs [][]byte) (int, error) { return Writev(fd, bs) }
