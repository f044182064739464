package latency

import (
	"github.com/svcdb/svcdb/core/resp"

	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// stats is Redis' struct latencyStats for one event.
type stats struct {
	allTimeHigh, avg, min, max, mad uint64
	samples                         int
	period                          int64 // seconds covered by the samples
}

// analyze is Redis' analyzeLatencyForEvent. Caller holds mu.
func (ts *series) analyze(now int64) stats {
	ls := stats{allTimeHigh: uint64(ts.max)}
	var sum uint64
	for j := range HistoryLen {
		s := ts.samples[j]
		if s.time == 0 {
			continue
		}
		lat := uint64(s.latency)
		ls.samples++
		if ls.samples == 1 {
			ls.min, ls.max = lat, lat
		} else {
			ls.min = min(ls.min, lat)
			ls.max = max(ls.max, lat)
		}
		sum += lat
		// Track the oldest sample's time in period.
		if ls.period == 0 || s.time < ls.period {
			ls.period = s.time
		}
	}
	if ls.samples > 0 {
		ls.avg = sum / uint64(ls.samples)
		ls.period = now - ls.period
		if ls.period == 0 {
			ls.period = 1
		}
	}
	sum = 0
	for j := range HistoryLen {
		s := ts.samples[j]
		if s.time == 0 {
			continue
		}
		delta := int64(ls.avg) - s.latency
		if delta < 0 {
			delta = -delta
		}
		sum += uint64(delta)
	}
	if ls.samples > 0 {
		ls.mad = sum / uint64(ls.samples)
	}
	return ls
}

// Doctor returns LATENCY DOCTOR's human-readable report: Redis 7.0's
// createLatencyReport, text for text.
func (m *Monitor) Doctor() string {
	var env Env
	if f := m.env.Load(); f != nil {
		env = (*f)()
	}
	threshold := m.threshold.Load()
	now := m.now().Unix()

	var (
		adviseBetterVM, adviseSlowlogEnabled, adviseSlowlogTuning, adviseSlowlogInspect bool
		adviseDiskContention, adviseScheduler, adviseDataWriteback, adviseNoAppendfsync bool
		adviseLocalDisk, adviseSSD, adviseWriteLoadInfo, adviseHz, adviseLargeObjects   bool
		adviseMassEviction, adviseRelaxFsyncPolicy, adviseDisableTHP                    bool
		advices                                                                         int
	)
	var b strings.Builder

	m.mu.Lock()
	if len(m.events) == 0 && threshold == 0 {
		m.mu.Unlock()
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	eventnum := 0
	for _, event := range m.names() {
		ts := m.events[event]
		eventnum++
		if eventnum == 1 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		ls := ts.analyze(now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			eventnum, event, ls.samples, ls.avg, ls.mad, float64(ls.period)/float64(ls.samples), uint64(ts.max))

		switch {
		case equalFold(event, "fork"):
			var quality string
			switch rate := env.ForkRateGBps; {
			case rate < 10:
				quality = "terrible"
				adviseBetterVM = true
				advices++
			case rate < 25:
				quality = "poor"
				adviseBetterVM = true
				advices++
			case rate < 100:
				quality = "good"
			default:
				quality = "excellent"
			}
			fmt.Fprintf(&b, " Fork rate is %.2f GB/sec (%s).", env.ForkRateGBps, quality)
		case equalFold(event, "command"):
			if env.SlowlogSlowerThan < 0 {
				adviseSlowlogEnabled = true
				advices++
			} else if env.SlowlogSlowerThan.Microseconds()/1000 > threshold {
				adviseSlowlogTuning = true
				advices++
			}
			adviseSlowlogInspect = true
			adviseLargeObjects = true
			advices += 2
		case equalFold(event, "fast-command"):
			adviseScheduler = true
			advices++
		case equalFold(event, "aof-write-pending-fsync"):
			adviseLocalDisk, adviseDiskContention, adviseSSD, adviseDataWriteback = true, true, true, true
			advices += 4
		case equalFold(event, "aof-write-active-child"):
			adviseNoAppendfsync, adviseDataWriteback, adviseSSD = true, true, true
			advices += 3
		case equalFold(event, "aof-write-alone"):
			adviseLocalDisk, adviseDataWriteback, adviseSSD = true, true, true
			advices += 3
		case equalFold(event, "aof-fsync-always"):
			adviseRelaxFsyncPolicy = true
			advices++
		case equalFold(event, "aof-fstat"), equalFold(event, "rdb-unlink-temp-file"):
			adviseDiskContention, adviseLocalDisk = true, true
			advices += 2
		case equalFold(event, "aof-rewrite-diff-write"), equalFold(event, "aof-rename"):
			adviseWriteLoadInfo, adviseDataWriteback, adviseSSD, adviseLocalDisk = true, true, true, true
			advices += 4
		case equalFold(event, "expire-cycle"):
			adviseHz, adviseLargeObjects = true, true
			advices += 2
		case equalFold(event, "eviction-del"):
			adviseLargeObjects = true
			advices++
		case equalFold(event, "eviction-cycle"):
			adviseMassEviction = true
			advices++
		}
		b.WriteByte('\n')
	}
	m.mu.Unlock()

	// Advice not tied to an event.
	if m.anonHugePages() > 0 {
		adviseDisableTHP = true
		advices++
	}

	switch {
	case eventnum == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case eventnum > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if adviseBetterVM {
			b.WriteString("- If you are using a virtual machine, consider upgrading it with a faster one using a hypervisior that provides less latency during fork() calls. Xen is known to have poor fork() performance. Even in the context of the same VM provider, certain kinds of instances can execute fork faster than others.\n")
		}
		if adviseSlowlogEnabled {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", uint64(threshold)*1000)
		}
		if adviseSlowlogTuning {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", uint64(threshold)*1000)
		}
		if adviseSlowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if adviseScheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if adviseLocalDisk {
			b.WriteString("- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n")
		}
		if adviseSSD {
			b.WriteString("- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n")
		}
		if adviseDataWriteback {
			b.WriteString("- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n")
		}
		if adviseDiskContention {
			b.WriteString("- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n")
		}
		if adviseNoAppendfsync {
			b.WriteString("- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n")
		}
		if adviseRelaxFsyncPolicy && env.AppendFsyncAlways {
			b.WriteString("- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n")
		}
		if adviseWriteLoadInfo {
			b.WriteString("- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n")
		}
		if adviseHz && env.Hz < 100 {
			b.WriteString("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n")
		}
		if adviseLargeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
		if adviseMassEviction {
			b.WriteString("- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n")
		}
		if adviseDisableTHP {
			b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
		}
	}
	return b.String()
}

// anonHugePagesBytes is Redis' THPGetAnonHugePagesSize: the process's
// AnonHugePages from /proc/self/smaps_rollup (the sum Redis computes over
// /proc/self/smaps), 0 where there is no such file.
func anonHugePagesBytes() int64 {
	for _, path := range []string{"/proc/self/smaps_rollup", "/proc/self/smaps"} {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		var total int64
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("AnonHugePages:"))
			if !ok {
				continue
			}
			kb, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
			total += kb * 1024
		}
		f.Close()
		return total
	}
	return 0
}

// equalFold is C's strcasecmp(a, b) == 0 in the C locale: ASCII only.
func equalFold(a, b string) bool { return resp.EqualFold([]byte(a), b) }
