package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Sentinel: real redis-sentinel 7.0 processes monitor a svcdb master and
// two svcdb replicas and fail over when the master dies
// (docs/replication.md, "Failover with Sentinel").

// sentinel is a redis-sentinel process run by a test.
type sentinel struct {
	addr string
	cmd  *exec.Cmd
	log  *lockedBuffer
}

// startSentinel runs redis-sentinel on a free loopback port monitoring
// master as "mymaster" with quorum, with short timeouts (down after 1 s,
// failover timeout 5 s). Without redis-sentinel the test fails under
// CI=true and skips otherwise.
func startSentinel(t *testing.T, master string, quorum int) *sentinel {
	t.Helper()
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		msg := "redis-sentinel is required for the failover tests (make deps installs it: apt-get install redis-sentinel)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set CI=true to make this a failure")
	}
	host, port, _ := net.SplitHostPort(master)
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sport := l.Addr().(*net.TCPAddr).Port
		l.Close()
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf") // Sentinel rewrites it: its own file
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n"+
			"sentinel monitor mymaster %s %s %d\n"+
			"sentinel down-after-milliseconds mymaster 1000\n"+
			"sentinel failover-timeout mymaster 5000\n"+
			"sentinel parallel-syncs mymaster 1\n", sport, dir, host, port, quorum)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s := &sentinel{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(sport)), log: &lockedBuffer{}}
		s.cmd = exec.Command(bin, conf)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(exited) }()
		t.Cleanup(func() { _ = s.cmd.Process.Kill(); <-exited })
		c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		deadline := time.Now().Add(10 * time.Second)
		for c.Ping(context.Background()).Err() != nil && time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Time{}
			case <-time.After(50 * time.Millisecond):
			}
		}
		up := c.Ping(context.Background()).Err() == nil
		c.Close()
		if up {
			return s
		}
		if attempt == 2 || !strings.Contains(s.log.String(), "Address already in use") {
			t.Fatalf("redis-sentinel did not start:\n%s", s.log.String())
		}
	}
}

// masterAddr asks Sentinel where mymaster is.
func (s *sentinel) masterAddr(t *testing.T) string {
	t.Helper()
	c := redis.NewSentinelClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	hp, err := c.GetMasterAddrByName(context.Background(), "mymaster").Result()
	if err != nil || len(hp) != 2 {
		return ""
	}
	return net.JoinHostPort(hp[0], hp[1])
}

// TestSentinelFailover: three Sentinels (quorum 2) monitor a svcdb master
// with two svcdb replicas. They find the replicas through INFO replication
// and each other through the master's __sentinel__:hello channel. When the
// master is SIGKILLed they promote a replica (MULTI, REPLICAOF NO ONE,
// CONFIG REWRITE, CLIENT KILL, EXEC), the other replica follows it, every
// write WAIT acknowledged before the kill is on the new master, go-redis'
// FailoverClient and rueidis' Sentinel mode write to the new master, and
// the old master, restarted on its port, is turned into a replica.
func TestSentinelFailover(t *testing.T) {
	if _, err := exec.LookPath("redis-sentinel"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("redis-sentinel is required for the failover tests (apt-get install redis-sentinel); set CI=true to make this a failure")
	}
	bin := buildBinary(t)
	ctx := context.Background()
	mcmd, maddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(maddr)
	var raddrs []string
	for range 2 {
		_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
		r := client(t, addr)
		if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
			t.Fatal(err)
		}
		raddrs = append(raddrs, addr)
	}
	m := client(t, maddr)
	for _, a := range raddrs {
		waitInSync(t, m, client(t, a))
	}
	var sents []*sentinel
	for range 3 {
		sents = append(sents, startSentinel(t, maddr, 2))
	}
	// Each Sentinel found both replicas (INFO replication's slaveN lines)
	// and the two other Sentinels (hello messages through svcdb's Pub/Sub).
	for _, s := range sents {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		defer sc.Close()
		waitFor(t, "Sentinel to see 2 replicas and 2 other Sentinels", func() bool {
			reps, err1 := sc.Replicas(ctx, "mymaster").Result()
			others, err2 := sc.Sentinels(ctx, "mymaster").Result()
			return err1 == nil && err2 == nil && len(reps) == 2 && len(others) == 2
		})
	}

	fc := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    "mymaster",
		SentinelAddrs: []string{sents[0].addr, sents[1].addr, sents[2].addr},
		MaxRetries:    -1,
	})
	defer fc.Close()
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{sents[0].addr, sents[1].addr, sents[2].addr},
		Sentinel:    rueidis.SentinelOption{MasterSet: "mymaster"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := fc.Set(ctx, "via-failover-client", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, rc.B().Set().Key("via-rueidis").Value("before").Build()).Error(); err != nil {
		t.Fatal(err)
	}

	// Writes, each batch acknowledged by WAIT 2 (both replicas); then the
	// master dies under a write load nobody waits for.
	acked := 0
	for batch := range 10 {
		pipe := m.Pipeline()
		for i := range 100 {
			pipe.Set(ctx, "acked:"+strconv.Itoa(batch*100+i), batch*100+i, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := m.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
			t.Fatalf("WAIT 2: %d, %v", n, err)
		}
		acked += 100
	}
	var wg sync.WaitGroup
	stopLoad := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				return
			default:
			}
			if m.Set(ctx, "unacked:"+strconv.Itoa(i), i, 0).Err() != nil {
				return // the master is gone
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	_ = mcmd.Process.Kill() // SIGKILL
	_ = mcmd.Wait()
	close(stopLoad)
	wg.Wait()

	var newMaster string
	deadline := time.Now().Add(30 * time.Second)
	for newMaster == "" || newMaster == maddr {
		if time.Now().After(deadline) {
			t.Fatalf("no failover after 30 s; Sentinel's log:\n%s", sents[0].log.String())
		}
		time.Sleep(100 * time.Millisecond)
		newMaster = sents[0].masterAddr(t)
	}
	other := raddrs[0]
	if other == newMaster {
		other = raddrs[1]
	}
	if newMaster != raddrs[0] && newMaster != raddrs[1] {
		t.Fatalf("Sentinel says the master is %s; the replicas are %v", newMaster, raddrs)
	}
	nm, oc := client(t, newMaster), client(t, other)
	waitFor(t, "the promoted replica to say it is a master", func() bool {
		return field(nm.Info(ctx, "replication").Val(), "role") == "master"
	})
	_, nport, _ := net.SplitHostPort(newMaster)
	waitFor(t, "the other replica to follow the new master", func() bool {
		ri := oc.Info(ctx, "replication").Val()
		return field(ri, "master_port") == nport && field(ri, "master_link_status") == "up"
	})
	// The promoted replica kept the old master's stream in its backlog and
	// its ID as the secondary one: the other replica continued (PSYNC2).
	if st := nm.Info(ctx, "stats").Val(); field(st, "sync_partial_ok") != "1" || field(st, "sync_full") != "0" {
		t.Errorf("the new master served sync_partial_ok %s, sync_full %s; want the other replica to continue",
			field(st, "sync_partial_ok"), field(st, "sync_full"))
	}
	for i := range acked {
		k := "acked:" + strconv.Itoa(i)
		if v, err := nm.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("%s acknowledged by WAIT 2 before the failover: %q, %v on the new master", k, v, err)
		}
	}
	if v := nm.Get(ctx, "via-failover-client").Val(); v != "before" {
		t.Errorf("via-failover-client on the new master: %q", v)
	}

	// Both clients find the new master through the Sentinels.
	waitFor(t, "go-redis' FailoverClient to write to the new master", func() bool {
		return fc.Set(ctx, "via-failover-client", "after", 0).Err() == nil
	})
	waitFor(t, "rueidis to write to the new master", func() bool {
		return rc.Do(ctx, rc.B().Set().Key("via-rueidis").Value("after").Build()).Error() == nil
	})
	if v := nm.Get(ctx, "via-failover-client").Val(); v != "after" {
		t.Errorf("the FailoverClient's write is not on the new master: %q", v)
	}
	if v := nm.Get(ctx, "via-rueidis").Val(); v != "after" {
		t.Errorf("rueidis' write is not on the new master: %q", v)
	}
	waitInSync(t, nm, oc)
	if v := oc.Get(ctx, "via-failover-client").Val(); v != "after" {
		t.Errorf("the other replica lacks the write to the new master: %q", v)
	}

	// The old master comes back empty on its port: Sentinel makes it a
	// replica of the new master, and it syncs.
	_, back, _ := startProcess(t, bin, "--port", mport, "--http-port", "0", "--data-dir", t.TempDir())
	if back != maddr {
		t.Fatalf("the restarted master listens on %s, want %s", back, maddr)
	}
	om := client(t, back)
	// Sentinel's master is read again at each try: on a loaded machine
	// (CI, the race detector) the Sentinels may fail the promoted replica
	// over in turn (its 1 s down-after), and the old master must then
	// follow whichever node they made master, not the first one.
	deadline = time.Now().Add(40 * time.Second)
	cur := newMaster
	for {
		if a := sents[0].masterAddr(t); a != "" {
			cur = a
		}
		_, cport, _ := net.SplitHostPort(cur)
		ri := om.Info(ctx, "replication").Val()
		if field(ri, "role") == "slave" && field(ri, "master_port") == cport && field(ri, "master_link_status") == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old master did not rejoin as a replica of Sentinel's master %s after 40 s:\n%s\nSentinel's log:\n%s", cur, ri, sents[0].log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cur != newMaster {
		t.Logf("Sentinel failed over again, from %s to %s; the old master follows %s", newMaster, cur, cur)
	}
	waitInSync(t, client(t, cur), om)
	if v := om.Get(ctx, "acked:0").Val(); v != "0" {
		t.Errorf("the rejoined old master lacks acked:0: %q", v)
	}
	if err := om.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Errorf("SET on the rejoined old master: %v", err)
	}
}

// TestReplicaOfPersistedByConfigRewrite: what Sentinel sends to reconfigure
// a node (MULTI, REPLICAOF, CONFIG REWRITE, CLIENT KILL TYPE normal and
// pubsub, EXEC) changes the role, writes it to the config file as
// replicaof, and a restart from that file comes back as a replica of the
// same master. replica-priority and replica-announce-ip/port are what the
// master and Sentinel see.
func TestReplicaOfPersistedByConfigRewrite(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	_, maddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(maddr)
	m := client(t, maddr)
	if err := m.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "svcdb.toml")
	if err := os.WriteFile(conf, []byte("[redis]\nreplica-priority = 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rcmd, raddr, _ := startProcess(t, bin, "--config", conf, "--http-port", "0", "--data-dir", dir)
	r := client(t, raddr)
	// A Pub/Sub client and a normal one: the transaction kills both, not
	// the caller (CLIENT KILL's SKIPME yes).
	sub := client(t, raddr).Subscribe(ctx, "__sentinel__:hello")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := net.Dial("tcp", raddr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := r.ConfigSet(ctx, "replica-announce-ip", "10.9.8.7").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.ConfigSet(ctx, "slave-announce-port", "4242").Err(); err != nil {
		t.Fatal(err)
	}
	// Killed: r's pooled connection and other (normal), sub (pubsub).
	want := "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*4\r\n+OK\r\n+OK\r\n:2\r\n:1\r\n"
	req := "MULTI\r\nREPLICAOF 127.0.0.1 " + mport + "\r\nCONFIG REWRITE\r\nCLIENT KILL TYPE normal\r\nCLIENT KILL TYPE pubsub\r\nEXEC\r\n"
	if got := readN(t, raddr, req, len(want)); got != want {
		t.Errorf("Sentinel's reconfiguration transaction: %q, want %q", got, want)
	}
	_ = other.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := other.Read(make([]byte, 16)); err == nil {
		t.Errorf("the normal client survived CLIENT KILL TYPE normal (read %d bytes)", n)
	}
	waitInSync(t, m, r)
	if v := r.Get(ctx, "k").Val(); v != "v" {
		t.Errorf("the replica lacks the master's key: %q", v)
	}
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `replicaof = "127.0.0.1 `+mport+`"`) {
		t.Errorf("CONFIG REWRITE after REPLICAOF did not persist the role:\n%s", data)
	}
	ri := r.Info(ctx, "replication").Val()
	if field(ri, "slave_priority") != "7" || field(ri, "replica_announced") != "1" {
		t.Errorf("INFO replication on the replica:\n%s", ri)
	}
	if s0 := field(m.Info(ctx, "replication").Val(), "slave0"); !strings.HasPrefix(s0, "ip=10.9.8.7,port=4242,state=online") {
		t.Errorf("the master's slave0 with replica-announce-ip/port set: %q", s0)
	}
	// The links are clients: flags=S on the master, flags=M on the
	// replica, killable by type; the replica comes back with +CONTINUE.
	ml := m.Do(ctx, "CLIENT", "LIST", "TYPE", "replica").Val().(string)
	if strings.Count(ml, "\n") != 1 || !strings.Contains(ml, " flags=S ") || !strings.Contains(ml, " cmd=psync ") {
		t.Errorf("CLIENT LIST TYPE replica on the master: %q", ml)
	}
	if all := m.ClientList(ctx).Val(); !strings.Contains(all, " flags=S ") {
		t.Errorf("CLIENT LIST on the master lacks the replica: %q", all)
	}
	rl := r.Do(ctx, "CLIENT", "LIST", "TYPE", "master").Val().(string)
	if strings.Count(rl, "\n") != 1 || !strings.Contains(rl, " flags=M ") || !strings.Contains(rl, "addr="+maddr+" ") {
		t.Errorf("CLIENT LIST TYPE master on the replica: %q", rl)
	}
	if n := m.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Val(); n != int64(0) {
		t.Errorf("CLIENT KILL TYPE normal on the master killed %v (its replica is not normal)", n)
	}
	if n := m.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Val(); n != int64(1) {
		t.Errorf("CLIENT KILL TYPE replica: %v", n)
	}
	waitFor(t, "a partial resync after CLIENT KILL TYPE replica", func() bool {
		return field(m.Info(ctx, "stats").Val(), "sync_partial_ok") == "1"
	})
	// The master counts the PSYNC when it answers +CONTINUE; the replica
	// lists its new link once it has read it.
	waitFor(t, "the replica's link to be a client again", func() bool {
		l, _ := r.Do(ctx, "CLIENT", "LIST", "TYPE", "master").Text()
		return strings.Count(l, "\n") == 1
	})
	if n := r.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Val(); n != int64(1) {
		t.Errorf("CLIENT KILL TYPE master: %v", n)
	}
	waitFor(t, "a partial resync after CLIENT KILL TYPE master", func() bool {
		return field(m.Info(ctx, "stats").Val(), "sync_partial_ok") == "2"
	})
	waitInSync(t, m, r)
	if err := r.ConfigSet(ctx, "replicaof", "127.0.0.1 1").Err(); err == nil {
		t.Errorf("CONFIG SET replicaof accepted: REPLICAOF changes the role")
	}

	// Restarted from the rewritten file: a replica of the same master.
	stop(t, rcmd)
	if err := m.Set(ctx, "while-down", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, raddr2, _ := startProcess(t, bin, "--config", conf, "--http-port", "0", "--data-dir", dir)
	r2 := client(t, raddr2)
	waitInSync(t, m, r2)
	if v := r2.Get(ctx, "while-down").Val(); v != "1" {
		t.Errorf("the restarted replica lacks a write made while it was down: %q", v)
	}
	// REPLICAOF NO ONE and CONFIG REWRITE: a master after the next restart.
	if err := r2.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r2.Do(ctx, "CONFIG", "REWRITE").Err(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(conf); !strings.Contains(string(data), `replicaof = ""`) {
		t.Errorf("CONFIG REWRITE after REPLICAOF NO ONE:\n%s", data)
	}
}

// TestMinReplicasToWrite: with min-replicas-to-write and
// min-replicas-max-lag a master refuses writes (and transactions queuing
// them) with Redis' -NOREPLICAS while too few replicas acknowledged within
// the lag, accepts them once a replica does, and refuses again once the
// replica is gone for longer than the lag.
func TestMinReplicasToWrite(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	_, maddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(maddr)
	m := client(t, maddr)
	if err := m.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.ConfigSet(ctx, "min-slaves-max-lag", "1").Err(); err != nil {
		t.Fatal(err)
	}
	const noReplicas = "NOREPLICAS Not enough good replicas to write."
	if err := m.Set(ctx, "k", "v", 0).Err(); err == nil || err.Error() != noReplicas {
		t.Errorf("SET without replicas: %v", err)
	}
	if v, err := m.Get(ctx, "k").Result(); err != redis.Nil {
		t.Errorf("GET without replicas: %q, %v (reads are allowed)", v, err)
	}
	want := "+OK\r\n-NOREPLICAS Not enough good replicas to write.\r\n-EXECABORT Transaction discarded because of previous errors.\r\n"
	if got := readN(t, maddr, "MULTI\r\nSET k v\r\nEXEC\r\n", len(want)); got != want {
		t.Errorf("MULTI SET EXEC without replicas: %q, want %q", got, want)
	}
	if got := field(m.Info(ctx, "replication").Val(), "min_slaves_good_slaves"); got != "0" {
		t.Errorf("min_slaves_good_slaves without replicas: %q", got)
	}

	rcmd, raddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	r := client(t, raddr)
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a good replica", func() bool { return m.Set(ctx, "k", "v", 0).Err() == nil })
	if got := field(m.Info(ctx, "replication").Val(), "min_slaves_good_slaves"); got != "1" {
		t.Errorf("min_slaves_good_slaves with a replica: %q", got)
	}
	if n := m.Wait(ctx, 1, 5*time.Second).Val(); n != 1 {
		t.Errorf("WAIT 1: %d", n)
	}

	_ = rcmd.Process.Kill()
	_ = rcmd.Wait()
	waitFor(t, "-NOREPLICAS once the replica is gone", func() bool {
		err := m.Set(ctx, "k", "w", 0).Err()
		return err != nil && err.Error() == noReplicas
	})
	if err := m.ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "k", "w", 0).Err(); err != nil {
		t.Errorf("SET with min-replicas-to-write 0: %v", err)
	}
	if strings.Contains(m.Info(ctx, "replication").Val(), "min_slaves_good_slaves:") {
		t.Errorf("min_slaves_good_slaves shown with the check off")
	}
}
