package shard

import (
	"sync/atomic"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Completer is told when a queued batch has been executed, and when the queue
// that refused it (Runtime.TrySubmit) has made room. It is called by the
// goroutine that executed a batch, after Done turned true for a completed
// one, so it must only wake the batch's owner (netloop wakes the connection's
// event loop, which looks at Done or tries again) and must not touch the
// batch, which its owner may already be reusing.
type Completer interface {
	BatchDone()
}

// Batch carries consecutive commands of one connection that target one shard
// across goroutines: the producer copies their arguments into the batch's own
// slab (the read buffer they came from does not outlive the event-loop turn),
// the executor appends their replies to Out, and Done turns true when Out is
// complete. A connection keeps one Batch and reuses it, so the contended path
// allocates nothing in steady state either.
type Batch struct {
	Owner Completer
	Ctx   keyspace.Ctx // DB, RESP3 and client fields the commands run with; Args/Out are set per command

	shard int
	cmds  []queuedCommand
	argv  [][]byte
	slab  []byte

	// Out holds the replies, in order, once Done reports true.
	Out  []byte
	done atomic.Bool
	// finished is when the last command's reply was ready (cmdstats clock),
	// set by the executor before done.
	finished int64

	// control, when set, makes this a control message instead of commands:
	// drain calls it with the shard, as its owner, and nothing else happens
	// (no Owner, no Out, no Done). See inspect.go.
	control func(*Shard)
}

type queuedCommand struct {
	cmd      *command.Command
	argStart int // index into argv
	argEnd   int
	// Set by the executor: where the reply starts in Out and how long the
	// command took (from the end of the previous one, see execBatch).
	outStart int
	ns       int64
}

// maxRetainedSlab and maxRetainedArgv bound what a batch keeps between
// uses: a rare large command (a 512 MB bulk, a million arguments) that had
// to wait for its shard would otherwise pin its copy for the connection's
// life. Ordinary batches stay far below both, so the steady state still
// allocates nothing.
const (
	maxRetainedSlab = 1 << 20
	maxRetainedArgv = 1 << 14
	maxRetainedOut  = 1 << 20
)

// Reset empties b for reuse by its owner, dropping buffers a rare large
// batch grew past what is worth keeping.
func (b *Batch) Reset() {
	b.cmds = b.cmds[:0]
	if cap(b.argv) > maxRetainedArgv {
		b.argv = nil
	}
	b.argv = b.argv[:0]
	if cap(b.slab) > maxRetainedSlab {
		b.slab = nil
	}
	b.slab = b.slab[:0]
	if cap(b.Out) > maxRetainedOut {
		b.Out = nil
	}
	b.Out = b.Out[:0]
	b.done.Store(false)
}

// Add copies one command's arguments into the batch. Until seal runs, argv
// holds the caller's slices only as length carriers.
func (b *Batch) Add(cmd *command.Command, args [][]byte) {
	b.cmds = append(b.cmds, queuedCommand{cmd: cmd, argStart: len(b.argv), argEnd: len(b.argv) + len(args)})
	for _, a := range args {
		b.slab = append(b.slab, a...)
		b.argv = append(b.argv, a)
	}
}

// Len is the number of commands in b.
func (b *Batch) Len() int { return len(b.cmds) }

// seal points every argument at the batch's slab. It runs after the last Add,
// before the batch crosses to another goroutine.
func (b *Batch) seal() {
	off := 0
	for i, a := range b.argv {
		n := len(a)
		b.argv[i] = b.slab[off : off+n : off+n]
		off += n
	}
}

// Done reports whether b's replies are complete. Only the owner calls it.
func (b *Batch) Done() bool { return b.done.Load() }

// Finished is when b's replies were ready, on the cmdstats clock (read by the
// executor after its last command, so it costs no clock read). Only the
// owner calls it, once Done.
func (b *Batch) Finished() int64 { return b.finished }

// Executed describes command i of a batch that is Done: the command, its
// arguments, its reply within Out, and how long it took in nanoseconds.
func (b *Batch) Executed(i int) (cmd *command.Command, args [][]byte, reply []byte, ns int64) {
	q := &b.cmds[i]
	end := len(b.Out)
	if i+1 < len(b.cmds) {
		end = b.cmds[i+1].outStart
	}
	return q.cmd, b.argv[q.argStart:q.argEnd], b.Out[q.outStart:end], q.ns
}
