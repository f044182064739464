package shard

// addHashCommands registers the hash commands' handlers.
func addHashCommands(add func(name string, h handler, r routeKind)) {
}
