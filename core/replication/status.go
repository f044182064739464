package replication

import "time"

// Status is this node's replication state for /metrics and the debug API:
// read with a few short locks, never waiting for a role change.
type Status struct {
	Role       string `json:"role"` // "master" or "replica"
	MasterHost string `json:"master_host,omitempty"`
	MasterPort int    `json:"master_port,omitempty"`
	// LinkUp: a replica's link to its master streams; always true on a master.
	LinkUp bool  `json:"link_up"`
	Offset int64 `json:"offset"` // master_repl_offset (a replica's processed offset)
	// LagSeconds: on a replica, seconds since the last byte from its master
	// (since the link went down while it is down); on a master, the largest
	// of its replicas' ACK lags.
	LagSeconds        int64           `json:"lag_seconds"`
	ConnectedReplicas int             `json:"connected_replicas"`
	Replicas          []ReplicaStatus `json:"replicas"`
	// FullSyncs and PartialSyncs served as a master (INFO's sync_full and
	// sync_partial_ok); BacklogBytes is repl_backlog_histlen.
	FullSyncs    int64 `json:"full_syncs"`
	PartialSyncs int64 `json:"partial_syncs"`
	BacklogBytes int64 `json:"backlog_bytes"`
	// SyncSnapshots is how many snapshots the full syncs took (fewer than
	// FullSyncs when replicas shared one; Redis' total_forks counts them).
	SyncSnapshots int64 `json:"sync_snapshots"`
	// OnlineReplicas are the attached replicas past their full sync;
	// PeakReplicas the most online at once since this node last became a
	// master (0 on a replica). MinReplicasToWrite is min-replicas-to-write
	// while the check is on (0: off) and GoodReplicas how many acknowledged
	// within min-replicas-max-lag (Redis' min_slaves_good_slaves).
	OnlineReplicas     int   `json:"online_replicas"`
	PeakReplicas       int   `json:"peak_replicas"`
	MinReplicasToWrite int64 `json:"min_replicas_to_write"`
	GoodReplicas       int   `json:"good_replicas"`
}

// ReplicaStatus is one attached replica, as INFO's slaveN line.
type ReplicaStatus struct {
	IP         string `json:"ip"`
	Port       int    `json:"port"`
	State      string `json:"state"`
	Offset     int64  `json:"offset"`
	LagSeconds int64  `json:"lag_seconds"`
}

// Status returns the replication state.
func (r *Replica) Status() Status {
	now := time.Now().Unix()
	st := Status{Role: "master", LinkUp: true, Replicas: []ReplicaStatus{}}
	if host, port, ok := r.Master(); ok {
		st.Role, st.MasterHost, st.MasterPort = "replica", host, port
		st.LinkUp = r.State() == StateConnected
		st.Offset = r.offset.Load()
		if st.LinkUp {
			st.LagSeconds = now - r.lastIO.Load()
		} else {
			st.LagSeconds = now - r.downSince.Load()
		}
	} else {
		st.Offset = r.masterOffset()
	}
	for _, v := range r.replicaViews() {
		st.Replicas = append(st.Replicas, ReplicaStatus{IP: v.ip, Port: v.port, State: v.state, Offset: v.offset, LagSeconds: v.lagS})
		if v.state == slaveOnline {
			st.OnlineReplicas++
		}
		if st.Role == "master" {
			st.LagSeconds = max(st.LagSeconds, v.lagS)
		}
	}
	st.ConnectedReplicas = len(st.Replicas)
	st.FullSyncs, st.PartialSyncs, _ = r.SyncStats()
	r.feed.mu.Lock()
	if r.feed.backlog != nil {
		st.BacklogBytes = r.feed.backlog.Len()
	}
	st.PeakReplicas = r.feed.peakOnline
	st.SyncSnapshots = r.feed.syncSnapshots
	if r.feed.minToWrite > 0 && r.feed.minMaxLag > 0 {
		st.MinReplicasToWrite, st.GoodReplicas = r.feed.minToWrite, r.feed.good
	}
	r.feed.mu.Unlock()
	return st
}
