package shard

// addListCommands registers the list commands' handlers.
func addListCommands(add func(name string, h handler, r routeKind)) {
}
