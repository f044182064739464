package pubsub

import (
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// AppendMonitorLine appends MONITOR's line for a command (args) that ran at
// now in database db for the client at addr, as Redis 7.0.15's
// replicationFeedMonitors writes it:
//
//	+<unix seconds>.<microseconds> [<db> <client ip:port>] "arg" "arg" ...\r\n
//
// with every argument quoted as sdscatrepr quotes it (resp.AppendRepr),
// AUTH's and HELLO AUTH's secrets "(redacted)", and the address "lua" for
// a command a script ran (redis.call in EVAL or FCALL).
func AppendMonitorLine(line []byte, now time.Time, db int, addr string, args [][]byte) []byte {
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		line = append(line, '0')
	}
	line = strconv.AppendInt(line, int64(us), 10)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(db), 10)
	line = append(line, ' ')
	line = append(line, addr...)
	line = append(line, "] "...)
	redact := redactedArgs(args)
	for i, a := range args {
		if i > 0 {
			line = append(line, ' ')
		}
		if redact.has(i) {
			line = append(line, `"(redacted)"`...)
			continue
		}
		line = resp.AppendRepr(line, a)
	}
	return append(line, "\r\n"...)
}

// argSet is a small set of argument positions.
type argSet uint64

func (a argSet) has(i int) bool { return i < 64 && a&(1<<i) != 0 }

// redactedArgs are the arguments Redis 7.0 shows as "(redacted)":
// AUTH's password and user name (authCommand redacts them when it has two
// or three arguments), and the user name and password of HELLO's AUTH
// option (helloCommand redacts them as it reads the option, so an option
// it refused before stops it).
func redactedArgs(args [][]byte) argSet {
	var set argSet
	switch {
	case resp.EqualFold(args[0], "auth"):
		if len(args) == 2 || len(args) == 3 {
			for i := 1; i < len(args); i++ {
				set |= 1 << i
			}
		}
	case resp.EqualFold(args[0], "hello"):
		if len(args) < 2 {
			return 0
		}
		if v, ok := resp.ParseInt(args[1]); !ok || v < 2 || v > 3 {
			return 0
		}
		for i := 2; i < len(args) && i < 62; i++ {
			more := len(args) - i - 1
			switch {
			case resp.EqualFold(args[i], "auth") && more >= 2:
				set |= 1<<(i+1) | 1<<(i+2)
				i += 2
			case resp.EqualFold(args[i], "setname") && more >= 1:
				i++
			default:
				return set
			}
		}
	}
	return set
}
