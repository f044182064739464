package shard

import (
	"fmt"
	"strings"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Replayer executes the commands of an append-only file against the
// runtime, as Redis' AOF-loading fake client: SELECT switches its database,
// MULTI .. EXEC run together at EXEC (an unterminated MULTI at the end is
// dropped by Finish), and nothing expires while it runs, so the log's DELs
// (written when keys expired or were evicted) decide, not the wall clock.
// Use it before clients are served; one Replayer at a time.
type Replayer struct {
	rt    *Runtime
	ctx   keyspace.Ctx
	multi [][][]byte // commands queued since MULTI; nil outside a transaction
	inTx  bool
	n     int64
}

// NewReplayer starts replaying: expiry stops until Finish.
func (rt *Runtime) NewReplayer() *Replayer {
	rt.setLoading(true)
	r := &Replayer{rt: rt}
	r.ctx.Bind(rt.env)
	return r
}

// setLoading turns expiry off (on) for every shard, holding them all so the
// expiry cycle sees the change at its next turn.
func (rt *Runtime) setLoading(on bool) {
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.holdSet(&all)
	for _, s := range rt.shards {
		s.store.SetLoading(on)
	}
	rt.releaseSet(&all)
}

// Commands is how many commands ran.
func (r *Replayer) Commands() int64 { return r.n }

// Apply runs one command. An unknown command, a wrong arity or an error
// reply fails the load, as Redis refuses such a file ("Unknown command ...
// reading the append only file").
func (r *Replayer) Apply(args [][]byte) error {
	if len(args) == 0 {
		return nil
	}
	name := strings.ToLower(string(args[0]))
	switch {
	case name == "select" && !r.inTx: // inside MULTI it is queued, as Redis' loader queues it
		return r.selectDB(args)
	case name == "multi":
		r.inTx, r.multi = true, r.multi[:0]
		return nil
	case name == "exec":
		if !r.inTx {
			return fmt.Errorf("EXEC without MULTI")
		}
		r.inTx = false
		for _, q := range r.multi {
			run := r.run
			if strings.EqualFold(string(q[0]), "select") {
				run = r.selectDB
			}
			if err := run(q); err != nil {
				return err
			}
		}
		r.multi = r.multi[:0]
		return nil
	}
	if r.inTx {
		q := make([][]byte, len(args)) // the reader may reuse args' memory
		for i, a := range args {
			q[i] = append([]byte(nil), a...)
		}
		r.multi = append(r.multi, q)
		return nil
	}
	return r.run(args)
}

func (r *Replayer) selectDB(args [][]byte) error {
	n, ok := resp.ParseInt(args[len(args)-1])
	if len(args) != 2 || !ok || n < 0 || n >= keyspace.NumDatabases {
		return fmt.Errorf("bad SELECT %q", args[1:])
	}
	r.ctx.DB = int(n)
	return nil
}

func (r *Replayer) run(args [][]byte) error {
	rt := r.rt
	cmd := rt.table.Lookup(args[0])
	if cmd == nil {
		return fmt.Errorf("unknown command '%s' reading the append only file", args[0])
	}
	if !cmd.CheckArity(len(args)) {
		return fmt.Errorf("wrong number of arguments for '%s' reading the append only file", cmd.Name)
	}
	// A container (XGROUP) runs as netloop runs it: routed and handled as
	// the container, with its subcommand resolved once here (Ctx.Sub); the
	// subcommand names it in errors.
	top, sub := cmd, (*command.Command)(nil)
	if len(cmd.Subcommands) > 0 && len(args) > 1 {
		if sub = rt.table.LookupSub(cmd, args[1]); sub != nil {
			cmd = sub
		}
	}
	c := &r.ctx
	// Now 0: nothing counts as expired and absolute times in the past are
	// set, not applied (Redis' checkAlreadyExpired during loading). The log
	// holds absolute times only (see the handlers' rewrite).
	c.Now = 0
	c.Cmd, c.Sub, c.Args, c.Out = top, sub, args, c.Out[:0]
	if !rt.execHere(c) {
		return fmt.Errorf("command '%s' cannot be replayed from the append only file", cmd.FullName)
	}
	r.n++
	if len(c.Out) > 0 && c.Out[0] == '-' {
		return &ReplyError{Command: cmd.FullName, Reply: strings.TrimSpace(string(c.Out[1:]))}
	}
	return nil
}

// ReplyError is a command of the file that ran and replied with an error.
// Redis' loader ignores such replies (the command changed what it changed,
// as when it first ran); the persistence manager counts and logs them and
// goes on, while tests treat them as failures of the log.
type ReplyError struct {
	Command string
	Reply   string
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("'%s' replied %q while reading the append only file", e.Command, e.Reply)
}

// Finish drops an unterminated MULTI (as Redis does at the end of the file)
// and turns expiry back on.
func (r *Replayer) Finish() {
	r.inTx, r.multi = false, nil
	r.rt.setLoading(false)
}
