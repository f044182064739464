package shard

// addStreamCommands registers the stream commands' handlers.
func addStreamCommands(add func(name string, h handler, r routeKind)) {
}
