package tracking

import (
	"slices"
	"strings"

	"github.com/svcdb/svcdb/core/resp"
)

// Per client: the CLIENT subcommands and the state they change. Every
// method here that changes a State runs on the client's loop.

// Enable is Redis' enableTracking, with opts among Bcast, Optin, Optout
// and Noloop; on c's loop (st is c's). prefixes are copied.
func (t *Table) Enable(st *State, c Client, redirect int64, opts uint32, prefixes [][]byte) {
	t.installOnce.Do(t.install)
	f := st.flags.Load()
	if f&On == 0 {
		if st.client == nil {
			st.client = c // once, before the table can reach st
		}
		t.clients.Add(1)
		t.setMu.Lock()
		t.byID[c.ID()] = st
		t.setMu.Unlock()
	}
	f = f&^(BrokenRedir|Bcast|Optin|Optout|Noloop) | On
	st.redirect.Store(redirect)
	if opts&Bcast != 0 {
		f |= Bcast
		t.bmu.Lock()
		if len(prefixes) == 0 {
			t.addPrefix(st, "")
		}
		for _, p := range prefixes {
			t.addPrefix(st, string(p))
		}
		t.bmu.Unlock()
	}
	f |= opts & (Optin | Optout | Noloop)
	st.flags.Store(f)
}

// addPrefix is Redis' enableBcastTrackingForPrefix; the caller holds bmu.
func (t *Table) addPrefix(st *State, p string) {
	bs := t.prefixes[p]
	if bs == nil {
		bs = &bcastState{keys: make(map[string]int64), clients: make(map[*State]struct{})}
		t.prefixes[p] = bs
		t.nprefix.Add(1)
	}
	if _, ok := bs.clients[st]; !ok {
		bs.clients[st] = struct{}{}
		if i, found := slices.BinarySearch(st.prefixes, p); !found {
			st.prefixes = slices.Insert(st.prefixes, i, p)
		}
	}
}

// Disable is Redis' disableTracking: the table keeps the client's ID, to
// be skipped and dropped lazily; its prefixes go now. On the client's loop
// (CLIENT TRACKING OFF, RESET, the connection's close).
func (t *Table) Disable(st *State) {
	f := st.flags.Load()
	if f&Bcast != 0 {
		t.bmu.Lock()
		for _, p := range st.prefixes {
			bs := t.prefixes[p]
			delete(bs.clients, st)
			if len(bs.clients) == 0 {
				delete(t.prefixes, p)
				t.nprefix.Add(-1)
			}
		}
		t.bmu.Unlock()
		st.prefixes = nil
	}
	if f&On != 0 {
		t.clients.Add(-1)
		t.setMu.Lock()
		delete(t.byID, st.client.ID())
		t.setMu.Unlock()
		st.flags.Store(0)
	}
}

// Mode is what the runtime is told of the client's next command: whether
// it tracks, and whether that command's reads are remembered (Redis'
// trackingRememberKeys conditions: not in BCAST mode, and OPTIN and
// OPTOUT as CLIENT CACHING said).
func (st *State) Mode() (on, reads bool) {
	f := st.flags.Load()
	switch {
	case f&On == 0:
		return false, false
	case f&Bcast != 0:
		return true, false
	case f&Optin != 0:
		return true, f&Caching != 0
	case f&Optout != 0:
		return true, f&Caching == 0
	}
	return true, true
}

// EndCaching ends CLIENT CACHING's effect after the command it was for,
// as Redis' resetClient, and reports whether there was one (Mode changed).
// On the client's loop.
func (st *State) EndCaching() bool {
	if st.flags.Load()&Caching == 0 {
		return false
	}
	st.flags.And(^Caching)
	return true
}

// Redirect is GETREDIR's and CLIENT LIST's redir: the redirect while
// tracking, else -1. Any goroutine.
func (st *State) Redirect() int64 {
	if st.flags.Load()&On != 0 {
		return st.redirect.Load()
	}
	return -1
}

// FlagLetters are CLIENT LIST's t, R and B. Any goroutine.
func (st *State) FlagLetters() string {
	f := st.flags.Load()
	var b []byte
	if f&On != 0 {
		b = append(b, 't')
	}
	if f&BrokenRedir != 0 {
		b = append(b, 'R')
	}
	if f&Bcast != 0 {
		b = append(b, 'B')
	}
	return string(b)
}

// ---- commands ------------------------------------------------------------------

// Command is CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...]
// [OPTIN] [OPTOUT] [NOLOOP] for c (whose State is st), with Redis' checks
// in Redis' order; it appends the reply to dst. On c's loop.
func (t *Table) Command(dst []byte, st *State, c Client, args [][]byte) []byte {
	var (
		redirect int64
		opts     uint32
		prefixes [][]byte
	)
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		a := args[j]
		switch {
		case resp.EqualFold(a, "redirect") && more > 0:
			j++
			if redirect != 0 {
				return resp.AppendError(dst, "ERR A client can only redirect to a single other client")
			}
			id, ok := resp.ParseInt(args[j])
			if !ok {
				return append(dst, resp.ErrNotInteger...)
			}
			// The client must exist now, even if it may go later (Redis'
			// sanity check).
			if t.find(id) == nil {
				return resp.AppendError(dst, "ERR The client ID you want redirect to does not exist")
			}
			redirect = id
		case resp.EqualFold(a, "bcast"):
			opts |= Bcast
		case resp.EqualFold(a, "optin"):
			opts |= Optin
		case resp.EqualFold(a, "optout"):
			opts |= Optout
		case resp.EqualFold(a, "noloop"):
			opts |= Noloop
		case resp.EqualFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, args[j])
		default:
			return append(dst, resp.ErrSyntax...)
		}
	}
	switch {
	case resp.EqualFold(args[2], "on"):
		cur := st.flags.Load()
		switch {
		case opts&Bcast == 0 && len(prefixes) > 0:
			return resp.AppendError(dst, "ERR PREFIX option requires BCAST mode to be enabled")
		case cur&On != 0 && (cur&Bcast != 0) != (opts&Bcast != 0):
			return resp.AppendError(dst, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
		case opts&Bcast != 0 && opts&(Optin|Optout) != 0:
			return resp.AppendError(dst, "ERR OPTIN and OPTOUT are not compatible with BCAST")
		case opts&Optin != 0 && opts&Optout != 0:
			return resp.AppendError(dst, "ERR You can't specify both OPTIN mode and OPTOUT mode")
		case opts&Optin != 0 && cur&Optout != 0 || opts&Optout != 0 && cur&Optin != 0:
			return resp.AppendError(dst, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
		}
		if opts&Bcast != 0 {
			if msg := st.prefixCollision(prefixes); msg != "" {
				return resp.AppendError(dst, msg)
			}
		}
		t.Enable(st, c, redirect, opts, prefixes)
		return append(dst, resp.OK...)
	case resp.EqualFold(args[2], "off"):
		t.Disable(st)
		return append(dst, resp.OK...)
	}
	return append(dst, resp.ErrSyntax...)
}

// prefixCollision is Redis' checkPrefixCollisionsOrReply: no new prefix
// may be a prefix of another one, new or already the client's. It returns
// the error, "" when there is none.
func (st *State) prefixCollision(prefixes [][]byte) string {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		for _, h := range st.prefixes {
			if overlap(h, string(p)) {
				return "ERR Prefix '" + string(p) + "' overlaps with an existing prefix '" + h + "'. Prefixes for a single client must not overlap."
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(string(p), string(q)) {
				return "ERR Prefix '" + string(p) + "' overlaps with another provided prefix '" + string(q) + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// Caching is CLIENT CACHING YES|NO; it appends the reply to dst. On the
// client's loop.
func (st *State) Caching(dst []byte, args [][]byte) []byte {
	f := st.flags.Load()
	if f&On == 0 {
		return resp.AppendError(dst, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
	}
	switch {
	case resp.EqualFold(args[2], "yes"):
		if f&Optin == 0 {
			return resp.AppendError(dst, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
		}
	case resp.EqualFold(args[2], "no"):
		if f&Optout == 0 {
			return resp.AppendError(dst, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
		}
	default:
		return append(dst, resp.ErrSyntax...)
	}
	st.flags.Or(Caching)
	return append(dst, resp.OK...)
}

// Info is CLIENT TRACKINGINFO; it appends the reply to dst. On the
// client's loop.
func (st *State) Info(dst []byte, resp3 bool) []byte {
	f := st.flags.Load()
	flags := []string{"off"}
	if f&On != 0 {
		flags[0] = "on"
	}
	if f&Bcast != 0 {
		flags = append(flags, "bcast")
	}
	if f&Optin != 0 {
		flags = append(flags, "optin")
		if f&Caching != 0 {
			flags = append(flags, "caching-yes")
		}
	}
	if f&Optout != 0 {
		flags = append(flags, "optout")
		if f&Caching != 0 {
			flags = append(flags, "caching-no")
		}
	}
	if f&Noloop != 0 {
		flags = append(flags, "noloop")
	}
	if f&BrokenRedir != 0 {
		flags = append(flags, "broken_redirect")
	}
	dst = resp.AppendMapHeader(dst, 3, resp3)
	dst = resp.AppendBulkString(dst, "flags")
	dst = resp.AppendSetHeader(dst, len(flags), resp3)
	for _, fl := range flags {
		dst = resp.AppendBulkString(dst, fl)
	}
	dst = resp.AppendBulkString(dst, "redirect")
	dst = resp.AppendInt(dst, st.Redirect())
	dst = resp.AppendBulkString(dst, "prefixes")
	dst = resp.AppendArrayHeader(dst, len(st.prefixes))
	for _, p := range st.prefixes {
		dst = resp.AppendBulkString(dst, p)
	}
	return dst
}
