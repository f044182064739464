package netloop

import (
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/shard/rdb"
)

// The function libraries in persistence (issue 16 part 2): the runtime
// saves them in snapshots and restores them from RDB files and AOF replay
// through shard.FunctionLibraries, which functionLibraries implements over
// the script engine. FUNCTION LOAD, DELETE, FLUSH and RESTORE are recorded
// in the append-only file as they were sent (changeFunctions).

type functionLibraries struct{ s *Server }

func (f functionLibraries) LibraryCodes() []string {
	libs := f.s.scripts.Libraries()
	out := make([]string, len(libs))
	for i, lib := range libs {
		out[i] = lib.Code
	}
	return out
}

func (f functionLibraries) LoadLibraryCode(code []byte) error {
	_, err := f.s.scripts.LoadLibrary(code, false)
	return err
}

func (f functionLibraries) ReplayFunction(args [][]byte) error {
	e := f.s.scripts
	sub := args[1]
	switch {
	case resp.EqualFold(sub, "load") && len(args) >= 3:
		replace := false
		for _, a := range args[2 : len(args)-1] {
			if !resp.EqualFold(a, "replace") {
				return &scripting.Error{Msg: "ERR Unknown option given: " + string(a)}
			}
			replace = true
		}
		_, err := e.LoadLibrary(args[len(args)-1], replace)
		return err
	case resp.EqualFold(sub, "delete") && len(args) == 3:
		return e.DeleteLibrary(string(args[2]))
	case resp.EqualFold(sub, "flush"):
		e.FlushFunctions()
		return nil
	case resp.EqualFold(sub, "restore") && len(args) >= 3:
		policy := []byte("append")
		if len(args) == 4 {
			policy = args[3]
		}
		return f.s.restoreFunctions(args[2], policy)
	}
	return &scripting.Error{Msg: "ERR unsupported FUNCTION " + string(sub) + " in the append only file"}
}

// changeFunctions runs change, a FUNCTION command's change of the
// libraries, and records the command in the append-only file when it
// succeeds, both holding every shard (or inside the EXEC that holds them):
// the change and its record land together between whole commands, so a
// snapshot's point in time (an AOF rewrite's base, which reads the
// libraries while it holds every shard) has either both or neither.
func (s *Server) changeFunctions(c *client, args [][]byte, change func() error) error {
	if c.multi.inExec {
		if err := change(); err != nil {
			return err
		}
		s.rt.LogServerCommand(&c.ctx, args)
		return nil
	}
	s.rt.HoldAll()
	err := change()
	if err == nil {
		s.rt.LogServerCommand(&c.ctx, args)
	}
	c.ctx.LogEnd = max(c.ctx.LogEnd, s.rt.ReleaseAll())
	return err
}

// restoreFunctions is FUNCTION RESTORE's work after its arguments were
// checked: policy is FLUSH, APPEND or REPLACE (any case).
func (s *Server) restoreFunctions(payload, policy []byte) error {
	p := scripting.RestoreAppend
	switch {
	case resp.EqualFold(policy, "append"):
	case resp.EqualFold(policy, "replace"):
		p = scripting.RestoreReplace
	case resp.EqualFold(policy, "flush"):
		p = scripting.RestoreFlush
	default:
		return &scripting.Error{Msg: "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."}
	}
	codes, err := rdb.ParseFunctionsPayload(payload)
	if err != nil {
		return &scripting.Error{Msg: "ERR " + err.Error()}
	}
	return s.scripts.RestoreLibraries(codes, p)
}

// functionDump is FUNCTION DUMP: Redis' payload (rdb.AppendFunctionsPayload).
func (s *Server) functionDump(c *client) {
	payload := rdb.AppendFunctionsPayload(nil, functionLibraries{s}.LibraryCodes())
	c.out = resp.AppendBulk(c.out, payload)
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func (s *Server) functionRestore(c *client, args [][]byte) {
	if len(args) > 4 {
		c.out = resp.AppendError(c.out, "ERR unknown subcommand or wrong number of arguments for '"+string(args[1])+"'. Try FUNCTION HELP.")
		return
	}
	policy := []byte("append")
	if len(args) == 4 {
		policy = args[3]
	}
	if err := s.changeFunctions(c, args, func() error { return s.restoreFunctions(args[2], policy) }); err != nil {
		c.out = resp.AppendError(c.out, err.Error())
		return
	}
	c.out = append(c.out, resp.OK...)
}
