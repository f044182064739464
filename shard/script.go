package shard

// SetLogSuppressed makes the commands run next stay out of the append-only
// log (on) or go back into it (off): a script's redis.set_repl without
// REPL_AOF. Only the holder of every shard calls it (a script runs under
// HoldAll), and only commands run while the shards are held read it.
// REQUIRES: HoldAll is in effect.
func (rt *Runtime) SetLogSuppressed(on bool) { rt.noLog = on }
