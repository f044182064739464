package shard

import (
	"fmt"
	"strings"

	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/rdb"
)

// FunctionLibraries is the server's Lua function libraries (FUNCTION LOAD;
// core/scripting keeps them, netloop owns the engine). The runtime saves
// them in snapshots (Redis 7.0's RDB_OPCODE_FUNCTION2 records, after the
// header's aux fields), restores them from an RDB file, and hands FUNCTION
// commands met while replaying an append-only file back to them.
type FunctionLibraries interface {
	// LibraryCodes is every library's code, as FUNCTION LOAD got it.
	LibraryCodes() []string
	// LoadLibraryCode installs a library read from an RDB file; a library
	// or function already present is an error, as rdbFunctionLoad's.
	LoadLibraryCode(code []byte) error
	// ReplayFunction runs a FUNCTION command from the append-only file
	// (LOAD, DELETE, FLUSH, RESTORE); an error reply fails the load.
	ReplayFunction(args [][]byte) error
}

// SetFunctionLibraries connects the libraries to snapshots, LoadRDB and
// replay. Call it before serving.
func (rt *Runtime) SetFunctionLibraries(f FunctionLibraries) { rt.functions = f }

// libraryCodes is every library's code, or nil without libraries. A
// snapshot reads them at its point in time, holding every shard, as
// FUNCTION's changes hold them (netloop's changeFunctions): an AOF
// rewrite's base then has exactly the libraries whose commands went to the
// files before it.
func (rt *Runtime) libraryCodes() []string {
	if rt.functions == nil {
		return nil
	}
	return rt.functions.LibraryCodes()
}

// writeFunctions writes each library's code as a FUNCTION2 record.
func writeFunctions(wr *rdb.Writer, codes []string) error {
	var b []byte
	for _, code := range codes {
		b = rdb.AppendFunction(b, []byte(code))
	}
	if len(b) == 0 {
		return nil
	}
	_, err := wr.Write(b)
	return err
}

// loadFunctions installs the libraries an RDB file held.
func (rt *Runtime) loadFunctions(codes [][]byte) error {
	if len(codes) == 0 {
		return nil
	}
	if rt.functions == nil {
		return fmt.Errorf("the RDB file holds %d function libraries and this server keeps none", len(codes))
	}
	for _, code := range codes {
		if err := rt.functions.LoadLibraryCode(code); err != nil {
			return fmt.Errorf("loading a function library from the RDB file: %w", err)
		}
	}
	return nil
}

// replayFunction runs a FUNCTION command of the append-only file.
func (rt *Runtime) replayFunction(args [][]byte) error {
	if rt.functions == nil {
		return fmt.Errorf("FUNCTION %s in the append only file and this server keeps no function libraries", args[1:2])
	}
	return rt.functions.ReplayFunction(args)
}

// isFunctionCommand reports whether args is a FUNCTION command.
func isFunctionCommand(args [][]byte) bool {
	return len(args) > 1 && strings.EqualFold(string(args[0]), "function")
}

// LogServerCommand records args, a command that changed the server outside
// the keyspace (FUNCTION LOAD, DELETE, FLUSH, RESTORE), in the append-only
// log, as its own record; c gives the database (its SELECT). Returns the
// log offset after it (0 when the log is off), for appendfsync always.
// REQUIRES: the caller holds every shard (HoldAll), so the record lands
// between whole commands.
func (rt *Runtime) LogServerCommand(c *keyspace.Ctx, args [][]byte) {
	p := rt.env.LogFeed()
	if p == nil || rt.noLog {
		return
	}
	saved := c.Args
	c.Args = args
	c.ResetLogRewrite()
	p.Record(c)
	c.Args = saved
}
