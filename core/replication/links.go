package replication

import (
	"net"
	"sync/atomic"
	"time"
)

// Replication links as clients: CLIENT LIST shows a replica attached to this
// master with flags=S and this replica's link to its master with flags=M,
// and CLIENT KILL TYPE replica / master closes them, as Redis (whose
// replicas and master are clients in its one client list). The network side
// forgets a replica's connection once it is handed over, so this package
// answers for them.

// LinkClient is one replication link as CLIENT LIST shows it.
type LinkClient struct {
	ID          int64
	Addr, LAddr string
	Master      bool // the link to our master (flags=M); else a replica (flags=S)
	Created     time.Time
	LastIO      time.Time
	Cmd         string // the last command: "psync" or "sync" for a replica, "ping" for the master link
}

// masterLink is the current connection to our master.
type masterLink struct {
	id      int64
	nc      net.Conn
	created time.Time
}

// linkIDs hands out client IDs when Config.NewClientID is nil (tests).
var linkIDs atomic.Int64

func (r *Replica) newClientID() int64 {
	if r.cfg.NewClientID != nil {
		return r.cfg.NewClientID()
	}
	return linkIDs.Add(1)
}

// LinkClients returns the replication links: the attached replicas, then
// the link to our master while connected.
func (r *Replica) LinkClients() []LinkClient {
	var out []LinkClient
	f := &r.feed
	f.mu.Lock()
	for _, a := range f.replicas {
		if a.gone {
			continue
		}
		cmd := "psync"
		if a.sync {
			cmd = "sync"
		}
		last := a.lastAck
		if last.IsZero() {
			last = a.created
		}
		out = append(out, LinkClient{ID: a.info.ID, Addr: a.info.Addr, LAddr: a.conn.LocalAddr().String(),
			Created: a.created, LastIO: last, Cmd: cmd})
	}
	f.mu.Unlock()
	if l := r.link.Load(); l != nil && r.State() == StateConnected {
		out = append(out, LinkClient{ID: l.id, Addr: l.nc.RemoteAddr().String(), LAddr: l.nc.LocalAddr().String(),
			Master: true, Created: l.created, LastIO: time.Unix(r.lastIO.Load(), 0), Cmd: "ping"})
	}
	return out
}

// KillLinks closes the links match selects (CLIENT KILL TYPE replica or
// master with its other filters) and returns how many: a replica is
// dropped (it reconnects and asks to continue), the link to our master
// breaks and reconnects, as in Redis.
func (r *Replica) KillLinks(match func(LinkClient) bool) int {
	n := 0
	for _, lc := range r.LinkClients() {
		if !match(lc) {
			continue
		}
		if lc.Master {
			if l := r.link.Load(); l != nil && l.id == lc.ID {
				_ = l.nc.Close()
				n++
			}
			continue
		}
		f := &r.feed
		f.mu.Lock()
		for _, a := range f.replicas {
			if a.info.ID == lc.ID && !a.gone {
				a.gone = true
				_ = a.conn.Close()
				n++
			}
		}
		f.mu.Unlock()
	}
	return n
}
