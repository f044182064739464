// Metadata transcribed from Redis 7.0.15 (src/commands/slowlog*.json and
// latency*.json as served by COMMAND INFO and COMMAND DOCS). golden_test.go
// compares every entry with a live redis-server, so edits that drift from
// Redis fail there.

package command

// opsCommands returns fresh entries for the operators' diagnostics family:
// SLOWLOG and LATENCY (both in Redis' "server" group).
func opsCommands() []*Command {
	// Tips shared by most LATENCY subcommands, in Redis' order.
	latencyTips := func() []string {
		return []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	}
	admin := func() []string { return []string{"@admin", "@slow", "@dangerous"} }
	return []*Command{
		{
			Name:          "slowlog",
			Arity:         -2,
			Flags:         0,
			ACLCategories: []string{"@slow"},
			Group:         "server",
			Since:         "2.2.12",
			Summary:       "A container for slow log commands",
			Complexity:    "Depends on subcommand.",
			Subcommands: []*Command{
				{
					Name:          "get",
					Arity:         -2,
					Flags:         FlagAdmin | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          []string{"request_policy:all_nodes", "nondeterministic_output"},
					Group:         "server",
					Since:         "2.2.12",
					Summary:       "Get the slow log's entries",
					Complexity:    "O(N) where N is the number of entries returned",
					History: []History{
						{"4.0.0", "Added client IP address, port and name to the reply."},
					},
					Args: []Arg{
						{Name: "count", Type: ArgInteger, Flags: ArgOptional},
					},
				},
				{
					Name:          "help",
					Arity:         2,
					Flags:         FlagLoading | FlagStale,
					ACLCategories: []string{"@slow"},
					Group:         "server",
					Since:         "6.2.0",
					Summary:       "Show helpful text about the different subcommands",
					Complexity:    "O(1)",
				},
				{
					Name:          "len",
					Arity:         2,
					Flags:         FlagAdmin | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"},
					Group:         "server",
					Since:         "2.2.12",
					Summary:       "Get the slow log's length",
					Complexity:    "O(1)",
				},
				{
					Name:          "reset",
					Arity:         2,
					Flags:         FlagAdmin | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Group:         "server",
					Since:         "2.2.12",
					Summary:       "Clear all entries from the slow log",
					Complexity:    "O(N) where N is the number of entries in the slowlog",
				},
			},
		},
		{
			Name:          "latency",
			Arity:         -2,
			Flags:         0,
			ACLCategories: []string{"@slow"},
			Group:         "server",
			Since:         "2.8.13",
			Summary:       "A container for latency diagnostics commands",
			Complexity:    "Depends on subcommand.",
			Subcommands: []*Command{
				{
					Name:          "doctor",
					Arity:         2,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          latencyTips(),
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Return a human readable latency analysis report.",
					Complexity:    "O(1)",
				},
				{
					Name:          "graph",
					Arity:         3,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          latencyTips(),
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Return a latency graph for the event.",
					Complexity:    "O(1)",
					Args: []Arg{
						{Name: "event", Type: ArgString},
					},
				},
				{
					Name:          "help",
					Arity:         2,
					Flags:         FlagLoading | FlagStale,
					ACLCategories: []string{"@slow"},
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Show helpful text about the different subcommands.",
					Complexity:    "O(1)",
				},
				{
					Name:          "histogram",
					Arity:         -2,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          latencyTips(),
					Group:         "server",
					Since:         "7.0.0",
					Summary:       "Return the cumulative distribution of latencies of a subset of commands or all.",
					Complexity:    "O(N) where N is the number of commands with latency information being retrieved.",
					Args: []Arg{
						{Name: "command", Type: ArgString, Flags: ArgOptional | ArgMultiple},
					},
				},
				{
					Name:          "history",
					Arity:         3,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          latencyTips(),
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Return timestamp-latency samples for the event.",
					Complexity:    "O(1)",
					Args: []Arg{
						{Name: "event", Type: ArgString},
					},
				},
				{
					Name:          "latest",
					Arity:         2,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          latencyTips(),
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Return the latest latency samples for all events.",
					Complexity:    "O(1)",
				},
				{
					Name:          "reset",
					Arity:         -2,
					Flags:         FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
					ACLCategories: admin(),
					Tips:          []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Group:         "server",
					Since:         "2.8.13",
					Summary:       "Reset latency data for one or more events.",
					Complexity:    "O(1)",
					Args: []Arg{
						{Name: "event", Type: ArgString, Flags: ArgOptional | ArgMultiple},
					},
				},
			},
		},
	}
}
