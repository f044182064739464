package replication

import (
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Client-visible refusals, byte for byte Redis 7.0's (processCommand).
const (
	ErrReadOnly   = "-READONLY You can't write against a read only replica.\r\n"
	ErrMasterDown = "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
	ErrLoading    = "-LOADING Redis is loading the dataset in memory\r\n"
	ErrNoReplicas = "-NOREPLICAS Not enough good replicas to write.\r\n"
)

// Refusal returns the error a client's command with these flags gets
// because of this server's role, in Redis' order: on a master -NOREPLICAS
// for writes while fewer than min-replicas-to-write replicas acknowledged
// within min-replicas-max-lag; on a replica -READONLY for writes under
// replica-read-only, -MASTERDOWN for commands without the stale flag while
// the link is down under replica-serve-stale-data no, -LOADING while the
// master's snapshot loads. "" lets it run. One atomic load on a master (two
// for a write).
func (r *Replica) Refusal(flags command.Flag) string {
	st := LinkState(r.state.Load())
	if st == StateNone {
		if flags&command.FlagWrite != 0 && r.feed.tooFewGood.Load() {
			return ErrNoReplicas
		}
		return ""
	}
	if flags&command.FlagWrite != 0 && r.readOnly.Load() {
		return ErrReadOnly
	}
	if st != StateConnected && flags&command.FlagStale == 0 && !r.serveStale.Load() {
		return ErrMasterDown
	}
	if st == StateLoading && flags&command.FlagLoading == 0 {
		return ErrLoading
	}
	return ""
}

// Master returns the master's host and port, and false on a master. It
// never waits for a role change in progress.
func (r *Replica) Master() (string, int, bool) {
	a := r.addr.Load()
	if a == nil {
		return "", 0, false
	}
	return a.host, a.port, true
}

// IDs returns the current replication IDs.
func (r *Replica) IDs() IDs {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	return r.ids
}

// Info writes the INFO replication section's fields in Redis 7.0's order
// (genRedisInfoString).
func (r *Replica) Info(add func(name string, value any)) {
	host, port, replica := r.Master()
	now := time.Now().Unix()
	st := r.State()
	if !replica {
		add("role", "master")
	} else {
		add("role", "slave")
		add("master_host", host)
		add("master_port", port)
		link := "down"
		if st == StateConnected {
			link = "up"
		}
		add("master_link_status", link)
		lastIO := int64(-1) // Redis: -1 while there is no master client
		if st == StateConnected {
			lastIO = now - r.lastIO.Load()
		}
		add("master_last_io_seconds_ago", lastIO)
		add("master_sync_in_progress", b2i(st == StateTransfer || st == StateLoading))
		// Before any sync Redis reports its own offset here (its cached
		// master is itself), as this does.
		off, readOff := r.offset.Load(), r.readOff.Load()
		add("slave_read_repl_offset", readOff)
		add("slave_repl_offset", off)
		if st == StateTransfer || st == StateLoading {
			total, read := r.xferSize.Load(), r.xferRead.Load()
			left, perc := int64(0), 0.0
			if total > 0 {
				left, perc = total-read, float64(read)*100/float64(total)
			}
			add("master_sync_total_bytes", total)
			add("master_sync_read_bytes", read)
			add("master_sync_left_bytes", left)
			add("master_sync_perc", formatPerc(perc))
			add("master_sync_last_io_seconds_ago", now-r.xferLastIO.Load())
		}
		if st != StateConnected {
			down := int64(-1)
			if r.everUp.Load() {
				down = now - r.downSince.Load()
			}
			add("master_link_down_since_seconds", down)
		}
		prio, announced := 100, true
		if r.cfg.Priority != nil {
			prio = r.cfg.Priority()
		}
		if r.cfg.Announced != nil {
			announced = r.cfg.Announced()
		}
		add("slave_priority", prio)
		add("slave_read_only", b2i(r.readOnly.Load()))
		add("replica_announced", b2i(announced))
	}
	ids := r.IDs()
	views := r.replicaViews()
	add("connected_slaves", len(views))
	if good, on := r.goodReplicas(); on {
		add("min_slaves_good_slaves", good)
	}
	for i, v := range views {
		add("slave"+strconv.Itoa(i), "ip="+v.ip+",port="+strconv.Itoa(v.port)+",state="+v.state+
			",offset="+strconv.FormatInt(v.offset, 10)+",lag="+strconv.FormatInt(v.lagS, 10))
	}
	add("master_failover_state", "no-failover")
	add("master_replid", ids.ID)
	add("master_replid2", ids.ID2)
	off := r.offset.Load()
	if !replica {
		off = r.masterOffset()
	}
	add("master_repl_offset", off)
	add("second_repl_offset", ids.Offset2)
	// The backlog exists from the first replica's attach on (as Redis
	// creates it then); before, as a Redis master that never had one.
	r.feed.mu.Lock()
	size := r.backlogSize()
	b := r.feed.backlog
	active, first, hist := 0, int64(0), int64(0)
	if b != nil {
		active, first, hist = 1, b.First(), b.Len()
	}
	r.feed.mu.Unlock()
	add("repl_backlog_active", active)
	add("repl_backlog_size", size)
	add("repl_backlog_first_byte_offset", first)
	add("repl_backlog_histlen", hist)
}

// AppendRole appends ROLE's reply: ["master", offset, []] or ["slave",
// host, port, state, offset] (roleCommand; the offset -1 before the first
// sync).
func (r *Replica) AppendRole(dst []byte) []byte {
	host, port, replica := r.Master()
	if !replica {
		dst = resp.AppendArrayHeader(dst, 3)
		dst = resp.AppendBulkString(dst, "master")
		dst = resp.AppendInt(dst, r.masterOffset())
		return r.appendReplicasRole(dst)
	}
	st := r.State()
	dst = resp.AppendArrayHeader(dst, 5)
	dst = resp.AppendBulkString(dst, "slave")
	dst = resp.AppendBulkString(dst, host)
	dst = resp.AppendInt(dst, int64(port))
	dst = resp.AppendBulkString(dst, st.roleState())
	off := int64(-1) // Redis: server.master ? reploff : -1
	if st == StateConnected {
		off = r.offset.Load()
	}
	return resp.AppendInt(dst, off)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// formatPerc is %.2f.
func formatPerc(p float64) string {
	return strconv.FormatFloat(p, 'f', 2, 64)
}
