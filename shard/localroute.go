package shard

import "github.com/svcdb/svcdb/core/command"

// MayRouteLocal reports whether Route may answer NotShard for cmd, a
// top-level command: it has no shard handler, or only some of its
// subcommands run in the shards (MEMORY). The network side must then have a
// handler of its own for it; it checks that at start-up.
func (rt *Runtime) MayRouteLocal(cmd *command.Command) bool {
	return rt.env.MayRouteLocal(cmd)
}
