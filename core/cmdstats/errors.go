package cmdstats

// errorCodes are the error codes errorstats reports by name: Redis' own
// codes, which are all svcdb replies with. Anything else is counted as
// "OTHER" so the set (and the label values of /metrics) stays bounded, where
// Redis stops tracking after 128 distinct codes.
var errorCodes = [...]string{
	"ERR", "WRONGTYPE", "NOAUTH", "WRONGPASS", "NOPERM", "EXECABORT", "LOADING",
	"BUSY", "BUSYKEY", "BUSYGROUP", "NOSCRIPT", "MISCONF", "OOM", "NOPROTO",
	"NOGROUP", "READONLY", "MASTERDOWN", "NOREPLICAS", "UNBLOCKED", "CROSSSLOT",
	"CLUSTERDOWN", "TRYAGAIN", "NOTBUSY", "UNKILLABLE", "NOTREADY", "OTHER",
}

const numErrorCodes = len(errorCodes)

// ErrorCodes lists the codes in the order of Snapshot.Errors.
func ErrorCodes() []string { return errorCodes[:] }

// errorCode classifies "-CODE message\r\n" (or "!len\r\nCODE ..." for RESP3
// blob errors, or a bare message) by its first word.
func errorCode(reply []byte) int {
	if len(reply) > 0 && reply[0] == '-' {
		reply = reply[1:]
	} else if len(reply) > 0 && reply[0] == '!' {
		for i, b := range reply {
			if b == '\n' {
				reply = reply[i+1:]
				break
			}
		}
	}
	end := 0
	for end < len(reply) && reply[end] != ' ' && reply[end] != '\r' && reply[end] != '\n' {
		end++
	}
	word := reply[:end]
	for i, code := range errorCodes[:numErrorCodes-1] {
		if string(word) == code {
			return i
		}
	}
	return numErrorCodes - 1
}
