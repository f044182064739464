// Copyright (c) 2026 The svcdb Authors. Licensed under the Apache License,
// Version 2.0, as the rest of gnet. This file is svcdb's patch to gnet
// v2.10.0 (see SVCDB-PATCH.md at the module's root).

package gnet

// TurnEnder is an optional interface of an EventHandler. When the handler
// given to Run, Rotate or NewClient implements it, each event-loop calls
// OnTurnEnd with itself at the end of each turn: after the callbacks
// (OnOpen, OnTraffic, OnClose) of a batch of I/O events and the queued tasks
// (Conn.Wake, EventLoop.Execute, AsyncWrite) that batch ran, before the loop
// waits again. It is not called after a wait that returned no event.
//
// OnTurnEnd runs on the event-loop's goroutine, so it may use the loop's
// connections as the callbacks do: a handler can, for instance, buffer the
// replies of a turn and write them all in OnTurnEnd, as Redis writes its
// replies in beforeSleep.
//
// Only the Unix pollers (epoll, kqueue) call it; on Windows it is never
// called.
type TurnEnder interface {
	OnTurnEnd(el EventLoop)
}
