package command

import "github.com/svcdb/svcdb/core/resp"

// Flag is the bit set of command flags, named after Redis' CMD_* flags.
// The bit positions are ours; only the names (see Names) are part of the
// wire format.
type Flag uint64

// Command flags. Redis' CMD_MODULE, CMD_SENTINEL and CMD_ONLY_SENTINEL have
// no counterpart: svcdb has neither modules nor a sentinel mode, so no entry
// could ever carry them.
const (
	FlagWrite           Flag = 1 << iota // may modify the keyspace
	FlagReadonly                         // reads keys, never modifies them
	FlagDenyOOM                          // may grow memory; refused when over maxmemory
	FlagAdmin                            // administrative; implies @admin and @dangerous
	FlagPubSub                           // pub/sub related
	FlagNoScript                         // not allowed from scripts
	FlagBlocking                         // may block the client
	FlagLoading                          // allowed while the dataset is loading
	FlagStale                            // allowed on a replica with stale data
	FlagSkipMonitor                      // not propagated to MONITOR
	FlagSkipSlowlog                      // not recorded in the slow log
	FlagAsking                           // cluster: accepted for importing slots
	FlagFast                             // O(1) or O(log N); implies @fast, otherwise @slow
	FlagNoAuth                           // allowed before AUTH
	FlagMayReplicate                     // may emit replication traffic
	FlagNoMandatoryKeys                  // all key arguments are optional
	FlagProtected                        // disabled unless enable-protected-configs; hidden in replies as in Redis
	FlagNoAsyncLoading                   // refused during async loading
	FlagNoMulti                          // not allowed inside MULTI
	FlagMovableKeys                      // key positions are not given by first/last/step
	FlagAllowBusy                        // allowed while a script is busy
)

// flagNames lists flags in the order Redis 7.0 replies with them
// (addReplyFlagsForCommand in server.c). FlagProtected is hidden there too.
var flagNames = [...]struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"},
	{FlagReadonly, "readonly"},
	{FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"},
	{FlagPubSub, "pubsub"},
	{FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"},
	{FlagLoading, "loading"},
	{FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"},
	{FlagSkipSlowlog, "skip_slowlog"},
	{FlagAsking, "asking"},
	{FlagFast, "fast"},
	{FlagNoAuth, "no_auth"},
	{FlagMayReplicate, "may_replicate"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"},
	{FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"},
	{FlagMovableKeys, "movablekeys"},
	{FlagAllowBusy, "allow_busy"},
}

// Names returns the Redis names of the flags set in f, in the order Redis
// 7.0 reports them in COMMAND INFO. It allocates; use it on cold paths only.
func (f Flag) Names() []string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// KeyFlag is the bit set of key-spec flags (CMD_KEY_* in Redis).
type KeyFlag uint32

// Key-spec flags, in Redis' reply order.
const (
	KeyRO            KeyFlag = 1 << iota // read-only access
	KeyRW                                // read-write access
	KeyOW                                // overwrite: the old value is not read
	KeyRM                                // the key is deleted
	KeyAccess                            // user data is returned / read
	KeyUpdate                            // data is updated in place
	KeyInsert                            // data is added, never modified or deleted
	KeyDelete                            // data is deleted
	KeyNotKey                            // the argument is not really a key (e.g. a channel)
	KeyIncomplete                        // the spec may miss keys
	KeyVariableFlags                     // flags depend on other arguments
)

var keyFlagNames = [...]struct {
	f    KeyFlag
	name string
}{
	{KeyRO, "RO"},
	{KeyRW, "RW"},
	{KeyOW, "OW"},
	{KeyRM, "RM"},
	{KeyAccess, "access"},
	{KeyUpdate, "update"},
	{KeyInsert, "insert"},
	{KeyDelete, "delete"},
	{KeyNotKey, "not_key"},
	{KeyIncomplete, "incomplete"},
	{KeyVariableFlags, "variable_flags"},
}

// Names returns the Redis names of the key-spec flags set in f, in Redis'
// order. It allocates; use it on cold paths only.
func (f KeyFlag) Names() []string {
	var out []string
	for _, fn := range keyFlagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// BeginSearchType says how a key spec finds its first key.
type BeginSearchType uint8

// The zero value is deliberately invalid so that a forgotten Type in a table
// literal is caught by the metadata test rather than silently meaning "unknown".
const (
	_            BeginSearchType = iota
	BeginIndex                   // the first key is at a fixed argument index
	BeginKeyword                 // the first key follows a keyword
	BeginUnknown                 // no static description (Redis "unknown")
)

// BeginSearch is the begin_search part of a key spec.
type BeginSearch struct {
	Type      BeginSearchType
	Index     int    // BeginIndex: argv index of the first key (argv[0] is the command name)
	Keyword   string // BeginKeyword: keyword preceding the first key
	StartFrom int    // BeginKeyword: argv index to start searching from; negative counts from the end
}

// FindKeysType says how a key spec finds the keys after the first one.
type FindKeysType uint8

// As with BeginSearchType, the zero value is invalid.
const (
	_           FindKeysType = iota
	FindRange                // keys run from the first key to LastKey (relative) every KeyStep
	FindKeyNum               // an argument holds the number of keys
	FindUnknown              // no static description
)

// FindKeys is the find_keys part of a key spec.
type FindKeys struct {
	Type FindKeysType
	// FindRange: LastKey is relative to the first key (-1 = last argument,
	// -2 = the one before...); Limit > 1 divides the remaining args.
	LastKey, Limit int
	// FindKeyNum: the key count is at first+KeyNumIdx and the keys start at
	// first+FirstKey.
	KeyNumIdx, FirstKey int
	// KeyStep is the distance between keys (both types).
	KeyStep int
}

// KeySpec is one Redis 7 key specification as COMMAND INFO reports it.
type KeySpec struct {
	Notes       string
	Flags       KeyFlag
	BeginSearch BeginSearch
	FindKeys    FindKeys
}

// ArgType is the type of a documented argument (COMMAND DOCS "type").
type ArgType uint8

// Argument types, named after Redis' ARG_TYPE_*. The zero value is invalid.
const (
	_ ArgType = iota
	ArgString
	ArgInteger
	ArgDouble
	ArgKey
	ArgPattern
	ArgUnixTime
	ArgPureToken
	ArgOneOf
	ArgBlock
)

var argTypeNames = [...]string{
	ArgString:    "string",
	ArgInteger:   "integer",
	ArgDouble:    "double",
	ArgKey:       "key",
	ArgPattern:   "pattern",
	ArgUnixTime:  "unix-time",
	ArgPureToken: "pure-token",
	ArgOneOf:     "oneof",
	ArgBlock:     "block",
}

// String returns the Redis name of the type ("" for an invalid type).
func (t ArgType) String() string {
	if int(t) < len(argTypeNames) {
		return argTypeNames[t]
	}
	return ""
}

// ArgFlag is the bit set of argument flags.
type ArgFlag uint8

// Argument flags, in Redis' reply order.
const (
	ArgOptional      ArgFlag = 1 << iota // may be omitted
	ArgMultiple                          // may repeat
	ArgMultipleToken                     // the token repeats with each value
)

var argFlagNames = [...]string{"optional", "multiple", "multiple_token"}

// DocFlag is the bit set of command doc flags (COMMAND DOCS "doc_flags").
type DocFlag uint8

// Doc flags, in Redis' reply order.
const (
	DocDeprecated DocFlag = 1 << iota // the command is deprecated
	DocSyscmd                         // system command, not meant for users
)

var docFlagNames = [...]string{"deprecated", "syscmd"}

// Arg documents one argument for COMMAND DOCS.
//
// Redis 7.2 added "display_text"; 7.0, which we match, does not send it, so
// there is no field for it yet.
type Arg struct {
	Name            string
	Type            ArgType
	KeySpecIndex    int  // meaningful when Type == ArgKey, or when PatternKeys is set
	PatternKeys     bool // an ArgPattern naming keys (SORT's BY and GET): KeySpecIndex is its key spec
	Token           string
	Summary         string
	Since           string
	DeprecatedSince string
	Flags           ArgFlag
	Args            []Arg // sub-arguments of ArgOneOf / ArgBlock
}

// History is one entry of a command's change history.
type History struct {
	Version, Changes string
}

// Command is the static metadata of one command or subcommand.
//
// Commands are built by New and never modified afterwards, so a *Command may
// be shared freely between goroutines. Slices inside must not be modified.
type Command struct {
	ID       int    // dense index 0..Table.Len()-1, for per-command stats arrays
	Name     string // lower case: "get", or the subcommand name alone: "setname"
	FullName string // "get", or "client|setname" for subcommands
	// Arity follows Redis: > 0 exact, < 0 minimum. It counts the command name
	// and, for subcommands, the subcommand name ("client setname x" is 3).
	Arity int
	Flags Flag
	// Legacy key positions as COMMAND INFO reports them: argv indexes of the
	// first and last key and the step between keys. FirstKey 0 means no keys;
	// a negative LastKey counts from the end (-1 = last argument).
	FirstKey, LastKey, Step int
	ACLCategories           []string // as Redis reports them, implicit ones included: "@read", "@string", "@fast"
	Tips                    []string // command tips, e.g. "nondeterministic_output"

	Group, Since, Summary, Complexity string
	DocFlags                          DocFlag
	DeprecatedSince, ReplacedBy       string
	History                           []History

	KeySpecs    []KeySpec
	Args        []Arg
	Subcommands []*Command // sorted by Name; nil for plain commands
	Parent      *Command   // nil for top-level commands

	// getKeys finds the keys of a command whose key specs Redis marks
	// "unknown" (its getkeys_proc): set by New for SORT and SORT_RO
	// (getkeys.go); nil for the others.
	getKeys func(args [][]byte, dst []int, flags []KeyFlag) ([]int, []KeyFlag, bool)
}

// CheckArity reports whether argc arguments (the command name, and for a
// subcommand also the subcommand name, included) satisfy c's arity.
func (c *Command) CheckArity(argc int) bool {
	if c.Arity >= 0 {
		return argc == c.Arity
	}
	return argc >= -c.Arity
}

// Keys appends to dst the indexes into args of the key arguments, as given
// by the legacy FirstKey/LastKey/Step positions, and returns the extended
// slice. args[0] is the command name. Like Redis' legacy range lookup it
// returns dst unchanged when args are too few for the positions (commands
// with a minimum arity are not rejected before their keys are looked at).
// It does not allocate when dst has room.
func (c *Command) Keys(args [][]byte, dst []int) []int {
	if c.FirstKey <= 0 || c.Step <= 0 {
		return dst
	}
	last := c.LastKey
	if last < 0 {
		last += len(args)
	}
	n := len(dst)
	for i := c.FirstKey; i <= last; i += c.Step {
		if i >= len(args) {
			return dst[:n]
		}
		dst = append(dst, i)
	}
	return dst
}

// KeysWithFlags is like Keys but evaluates the Redis 7 key specs, the way
// COMMAND GETKEYSANDFLAGS does, and also returns each key's spec flags in
// flags (same length as the returned indexes). ok is false when a spec cannot
// be evaluated statically or when args are too few; then dst and flags are
// returned unchanged.
func (c *Command) KeysWithFlags(args [][]byte, dst []int, flags []KeyFlag) (keys []int, kflags []KeyFlag, ok bool) {
	if c.getKeys != nil {
		return c.getKeys(args, dst, flags)
	}
	n, nf := len(dst), len(flags)
	argc := len(args)
	for _, ks := range c.KeySpecs {
		var first int
		switch ks.BeginSearch.Type {
		case BeginIndex:
			first = ks.BeginSearch.Index
		case BeginKeyword:
			first = searchKeyword(args, ks.BeginSearch.Keyword, ks.BeginSearch.StartFrom)
			if first < 0 {
				continue
			}
		default:
			return dst[:n], flags[:nf], false
		}
		if first >= argc {
			continue
		}
		var last, step int
		switch ks.FindKeys.Type {
		case FindRange:
			step = ks.FindKeys.KeyStep
			switch {
			case ks.FindKeys.LastKey >= 0:
				last = first + ks.FindKeys.LastKey
			case ks.FindKeys.Limit <= 1:
				last = argc + ks.FindKeys.LastKey
			default:
				last = first + (argc-first)/ks.FindKeys.Limit + ks.FindKeys.LastKey
			}
		case FindKeyNum:
			step = ks.FindKeys.KeyStep
			idx := first + ks.FindKeys.KeyNumIdx
			if idx >= argc {
				return dst[:n], flags[:nf], false
			}
			num, isNum := atoi(args[idx])
			if !isNum || num < 0 {
				return dst[:n], flags[:nf], false
			}
			first += ks.FindKeys.FirstKey
			last = first + (num-1)*step
		default:
			return dst[:n], flags[:nf], false
		}
		if step <= 0 {
			return dst[:n], flags[:nf], false
		}
		for i := first; i <= last; i += step {
			if i >= argc || i < first {
				return dst[:n], flags[:nf], false
			}
			dst = append(dst, i)
			flags = append(flags, ks.Flags)
		}
	}
	return dst, flags, true
}

// searchKeyword returns the index after the keyword, or -1. It mirrors
// Redis' loop: a positive startFrom searches forward up to (excluding) the
// last argument, otherwise it searches backwards from argc+startFrom down to
// argument 1.
func searchKeyword(args [][]byte, kw string, startFrom int) int {
	argc := len(args)
	start, end := argc+startFrom, 0
	if startFrom > 0 {
		start, end = startFrom, argc-1
	}
	for i := start; i != end; {
		if i >= argc || i < 1 {
			break
		}
		if resp.EqualFold(args[i], kw) {
			return i + 1
		}
		if start <= end {
			i++
		} else {
			i--
		}
	}
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// atoi parses a small non-negative decimal integer without allocating.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
