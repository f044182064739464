package shard

// addSetCommands registers the set commands' handlers.
func addSetCommands(add func(name string, h handler, r routeKind)) {
}
