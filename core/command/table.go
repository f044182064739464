package command

import (
	"fmt"
	"sort"
)

// maxNameLen bounds the names Lookup can match. Lookups lower-case the name
// into a stack array of this size; longer inputs cannot be commands and are
// rejected without looking. The longest Redis 7.0 full name,
// "cluster|count-failure-reports", is 29 bytes.
const maxNameLen = 64

// Table is the immutable set of known commands. It is built once by New and
// is safe for concurrent use by any number of goroutines.
type Table struct {
	top    map[string]*Command // top-level commands by lower-case Name
	byName nameIndex           // the same, for Lookup (nameindex.go)
	full   map[string]*Command // every command and subcommand by lower-case FullName
	all    []*Command          // top-level commands sorted by Name
	byID   []*Command          // every command and subcommand, indexed by ID
}

// New assembles the table from the per-family files (connection.go,
// strings.go, generic.go, hash.go, list.go, set.go, sortedset.go, stream.go,
// transactions.go, pubsub.go, memory.go, persistence.go, server.go, cluster.go, debug.go, ops.go,
// svc.go, acl.go, bitmap.go, scripting.go, replication.go, hyperloglog.go, geo.go, dbkeys.go, dump.go, lcs.go, functions.go). Each call builds fresh Command values, so tables never share
// state.
//
// IDs are assigned in name order, each command followed by its subcommands,
// which makes them stable for a given set of commands.
//
// New panics on malformed metadata (duplicate or over-long names); that is a
// programming error in this package, caught by its tests.
func New() *Table {
	var cmds []*Command
	cmds = append(cmds, connectionCommands()...)
	cmds = append(cmds, stringsCommands()...)
	cmds = append(cmds, bitmapCommands()...)
	cmds = append(cmds, hyperloglogCommands()...)
	cmds = append(cmds, geoCommands()...)
	cmds = append(cmds, genericCommands()...)
	cmds = append(cmds, dbkeysCommands()...)
	cmds = append(cmds, dumpCommands()...)
	cmds = append(cmds, lcsCommands()...)
	cmds = append(cmds, hashCommands()...)
	cmds = append(cmds, listCommands()...)
	cmds = append(cmds, setCommands()...)
	cmds = append(cmds, sortedSetCommands()...)
	cmds = append(cmds, streamCommands()...)
	cmds = append(cmds, transactionsCommands()...)
	cmds = append(cmds, pubsubCommands()...)
	cmds = append(cmds, serverCommands()...)
	cmds = append(cmds, clusterCommands()...)
	cmds = append(cmds, debugCommands()...)
	cmds = append(cmds, opsCommands()...)
	cmds = append(cmds, svcCommands()...)
	cmds = append(cmds, memoryCommands()...)
	cmds = append(cmds, persistenceCommands()...)
	cmds = append(cmds, aclCommands()...)
	cmds = append(cmds, scriptingCommands()...)
	cmds = append(cmds, replicationCommands()...)
	cmds = append(cmds, functionsCommands()...)

	setGetKeys(cmds) // getkeys.go
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	t := &Table{
		top:  make(map[string]*Command, len(cmds)),
		full: make(map[string]*Command, len(cmds)*2),
		all:  cmds,
	}
	for _, c := range cmds {
		c.FullName = c.Name
		t.add(c)
		sort.Slice(c.Subcommands, func(i, j int) bool { return c.Subcommands[i].Name < c.Subcommands[j].Name })
		for _, s := range c.Subcommands {
			s.Parent = c
			s.FullName = c.Name + "|" + s.Name
			t.add(s)
		}
	}
	t.byName = newNameIndex(cmds)
	return t
}

func (t *Table) add(c *Command) {
	if len(c.FullName) > maxNameLen {
		panic(fmt.Sprintf("command: name %q longer than %d bytes", c.FullName, maxNameLen))
	}
	for i := range len(c.Name) {
		if lower(c.Name[i]) != c.Name[i] || c.Name[i] == '|' {
			panic(fmt.Sprintf("command: name %q must be lower case without '|'", c.Name))
		}
	}
	if _, dup := t.full[c.FullName]; dup {
		panic(fmt.Sprintf("command: duplicate command %q", c.FullName))
	}
	c.ID = len(t.byID)
	t.byID = append(t.byID, c)
	t.full[c.FullName] = c
	if c.Parent == nil {
		t.top[c.Name] = c
	}
}

// Lookup returns the top-level command called name, compared ASCII
// case-insensitively, or nil. It does not allocate and does not retain name.
// Names containing '|' never match: as in Redis, subcommands are reached
// through LookupSub, not by their full name.
func (t *Table) Lookup(name []byte) *Command {
	return t.byName.find(name)
}

// LookupSub returns the subcommand sub of c (compared case-insensitively),
// or nil if c has no such subcommand. It does not allocate.
func (t *Table) LookupSub(c *Command, sub []byte) *Command {
	if c == nil || len(c.Subcommands) == 0 || len(c.Name)+1+len(sub) > maxNameLen {
		return nil
	}
	var buf [maxNameLen]byte
	n := copy(buf[:], c.Name)
	buf[n] = '|'
	n++
	for _, ch := range sub {
		if ch == '|' {
			return nil
		}
		buf[n] = lower(ch)
		n++
	}
	return t.full[string(buf[:n])]
}

// LookupFullName returns the command or subcommand with the given full name
// ("get", "client|setname"), case-insensitively, or nil. This is the form
// COMMAND INFO, COMMAND DOCS and ACL rules use. It does not allocate.
func (t *Table) LookupFullName(name []byte) *Command {
	if len(name) > maxNameLen {
		return nil
	}
	var buf [maxNameLen]byte
	for i, c := range name {
		buf[i] = lower(c)
	}
	return t.full[string(buf[:len(name)])]
}

// ByID returns the command or subcommand with the given ID, or nil when id
// is out of range.
func (t *Table) ByID(id int) *Command {
	if id < 0 || id >= len(t.byID) {
		return nil
	}
	return t.byID[id]
}

// Len returns the number of IDs: commands plus subcommands.
func (t *Table) Len() int { return len(t.byID) }

// All returns the top-level commands sorted by name. The slice is shared;
// callers must not modify it.
func (t *Table) All() []*Command { return t.all }
