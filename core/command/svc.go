// svcdb's own commands: Redis has no counterpart, so golden_test.go lists
// them in notIn70 instead of comparing them with a live redis-server.

package command

// svcCommands returns fresh entries for the commands svcdb adds to Redis'.
//
// STATUS is a container (STATUS JSON, STATUS HELP) that also runs without a
// subcommand (it prints the help, as SPEC Part B asks), hence arity -1 like
// COMMAND. Its entries are loading|stale, as INFO, so operators can read the
// status while the dataset loads; they are not "fast": STATUS JSON may wait
// for a late shard up to the collector's deadline.
func svcCommands() []*Command {
	return []*Command{
		{
			Name:          "status",
			Arity:         -1,
			Flags:         FlagLoading | FlagStale,
			ACLCategories: []string{"@slow"},
			Group:         "server",
			Since:         "svcdb",
			Summary:       "A container for svcdb's status document (the same as GET /status/json)",
			Complexity:    "Depends on subcommand.",
			Subcommands: []*Command{
				{
					Name:          "json",
					Arity:         2,
					Flags:         FlagLoading | FlagStale,
					ACLCategories: []string{"@slow"},
					Tips:          []string{"nondeterministic_output"},
					Group:         "server",
					Since:         "svcdb",
					Summary:       "Return the status document (svc, health, cluster, clients, memory, persistence, shards, keyspace, commands, hot_shards) as one JSON bulk string",
					Complexity:    "O(N) where N is the number of shards",
				},
				{
					Name:          "help",
					Arity:         2,
					Flags:         FlagLoading | FlagStale,
					ACLCategories: []string{"@slow"},
					Group:         "server",
					Since:         "svcdb",
					Summary:       "Show helpful text about the different subcommands",
					Complexity:    "O(1)",
				},
			},
		},
	}
}
