// Metadata transcribed from Redis 7.0.15 (src/commands/debug.json as served by
// COMMAND INFO and COMMAND DOCS). golden_test.go compares every entry with a
// live redis-server, so edits that drift from Redis fail there.

package command

// debugCommands returns a fresh DEBUG entry. Redis' DEBUG is not a container
// command: its subcommands are plain arguments, so the table lists none and
// svcdb implements only DEBUG HOTSHARDS (netloop refuses the others).
func debugCommands() []*Command {
	return []*Command{
		{
			Name:          "debug",
			Arity:         -2,
			Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
			ACLCategories: []string{"@admin", "@slow", "@dangerous"},
			Group:         "server",
			Since:         "1.0.0",
			Summary:       "A container for debugging commands",
			Complexity:    "Depends on subcommand.",
			DocFlags:      DocSyscmd,
		},
	}
}
