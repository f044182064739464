package shard

// addZSetCommands registers the zset commands' handlers.
func addZSetCommands(add func(name string, h handler, r routeKind)) {
}
