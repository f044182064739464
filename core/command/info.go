package command

// AppendInfo appends c's COMMAND INFO entry to dst, in the 10-element form
// of Redis 7.0 (addReplyCommandInfo): full name, arity, flags, first key,
// last key, step, ACL categories, tips, key specs, subcommands. resp3
// selects RESP3 sets and maps; under RESP2 they become arrays (maps flat).
// A nil c appends a null, as Redis does for unknown names.
//
// AppendInfo does not use t today; it is a method so that future per-table
// state (module commands, renamed commands) can shape the reply.
func (t *Table) AppendInfo(dst []byte, c *Command, resp3 bool) []byte {
	if c == nil {
		return appendNull(dst, resp3)
	}
	dst = appendArrayHeader(dst, 10)
	dst = appendBulk(dst, c.FullName)
	dst = appendInt(dst, c.Arity)
	dst = appendCommandFlags(dst, c.Flags, resp3)
	dst = appendInt(dst, c.FirstKey)
	dst = appendInt(dst, c.LastKey)
	dst = appendInt(dst, c.Step)
	dst = appendStatusSet(dst, c.ACLCategories, resp3)
	dst = appendSetHeader(dst, len(c.Tips), resp3)
	for _, tip := range c.Tips {
		dst = appendBulk(dst, tip)
	}
	dst = appendSetHeader(dst, len(c.KeySpecs), resp3)
	for i := range c.KeySpecs {
		dst = appendKeySpec(dst, &c.KeySpecs[i], resp3)
	}
	// Redis replies with an empty *set* when there are no subcommands and
	// with an array otherwise; keep the quirk, clients see it under RESP3.
	if len(c.Subcommands) == 0 {
		return appendSetHeader(dst, 0, resp3)
	}
	dst = appendArrayHeader(dst, len(c.Subcommands))
	for _, s := range c.Subcommands {
		dst = t.AppendInfo(dst, s, resp3)
	}
	return dst
}

func appendCommandFlags(dst []byte, f Flag, resp3 bool) []byte {
	n := 0
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			n++
		}
	}
	dst = appendSetHeader(dst, n, resp3)
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			dst = appendSimple(dst, fn.name)
		}
	}
	return dst
}

func appendKeyFlags(dst []byte, f KeyFlag, resp3 bool) []byte {
	n := 0
	for _, fn := range keyFlagNames {
		if f&fn.f != 0 {
			n++
		}
	}
	dst = appendSetHeader(dst, n, resp3)
	for _, fn := range keyFlagNames {
		if f&fn.f != 0 {
			dst = appendSimple(dst, fn.name)
		}
	}
	return dst
}

func appendKeySpec(dst []byte, ks *KeySpec, resp3 bool) []byte {
	n := 3
	if ks.Notes != "" {
		n++
	}
	dst = appendMapHeader(dst, n, resp3)
	if ks.Notes != "" {
		dst = appendBulk(dst, "notes")
		dst = appendBulk(dst, ks.Notes)
	}
	dst = appendBulk(dst, "flags")
	dst = appendKeyFlags(dst, ks.Flags, resp3)

	dst = appendBulk(dst, "begin_search")
	dst = appendMapHeader(dst, 2, resp3)
	dst = appendBulk(dst, "type")
	switch ks.BeginSearch.Type {
	case BeginIndex:
		dst = appendBulk(dst, "index")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 1, resp3)
		dst = appendBulk(dst, "index")
		dst = appendInt(dst, ks.BeginSearch.Index)
	case BeginKeyword:
		dst = appendBulk(dst, "keyword")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 2, resp3)
		dst = appendBulk(dst, "keyword")
		dst = appendBulk(dst, ks.BeginSearch.Keyword)
		dst = appendBulk(dst, "startfrom")
		dst = appendInt(dst, ks.BeginSearch.StartFrom)
	default:
		dst = appendBulk(dst, "unknown")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 0, resp3)
	}

	dst = appendBulk(dst, "find_keys")
	dst = appendMapHeader(dst, 2, resp3)
	dst = appendBulk(dst, "type")
	switch ks.FindKeys.Type {
	case FindRange:
		dst = appendBulk(dst, "range")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 3, resp3)
		dst = appendBulk(dst, "lastkey")
		dst = appendInt(dst, ks.FindKeys.LastKey)
		dst = appendBulk(dst, "keystep")
		dst = appendInt(dst, ks.FindKeys.KeyStep)
		dst = appendBulk(dst, "limit")
		dst = appendInt(dst, ks.FindKeys.Limit)
	case FindKeyNum:
		dst = appendBulk(dst, "keynum")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 3, resp3)
		dst = appendBulk(dst, "keynumidx")
		dst = appendInt(dst, ks.FindKeys.KeyNumIdx)
		dst = appendBulk(dst, "firstkey")
		dst = appendInt(dst, ks.FindKeys.FirstKey)
		dst = appendBulk(dst, "keystep")
		dst = appendInt(dst, ks.FindKeys.KeyStep)
	default:
		dst = appendBulk(dst, "unknown")
		dst = appendBulk(dst, "spec")
		dst = appendMapHeader(dst, 0, resp3)
	}
	return dst
}

// AppendDocs appends c's full name followed by its documentation map, i.e.
// one key/value pair of the COMMAND DOCS reply (addReplyCommandDocs in Redis
// 7.0): summary, since, group, then complexity, doc_flags, deprecated_since,
// replaced_by, history, arguments and subcommands when present. The caller
// writes the enclosing map header. A nil c appends nothing, as Redis omits
// unknown names.
func (t *Table) AppendDocs(dst []byte, c *Command, resp3 bool) []byte {
	if c == nil {
		return dst
	}
	dst = appendBulk(dst, c.FullName)
	return t.appendDocMap(dst, c, resp3)
}

func (t *Table) appendDocMap(dst []byte, c *Command, resp3 bool) []byte {
	n := 3
	for _, present := range [...]bool{
		c.Complexity != "", c.DocFlags != 0, c.DeprecatedSince != "", c.ReplacedBy != "",
		len(c.History) > 0, len(c.Args) > 0, len(c.Subcommands) > 0,
	} {
		if present {
			n++
		}
	}
	dst = appendMapHeader(dst, n, resp3)
	dst = appendBulk(dst, "summary")
	dst = appendBulk(dst, c.Summary)
	dst = appendBulk(dst, "since")
	dst = appendBulk(dst, c.Since)
	dst = appendBulk(dst, "group")
	dst = appendBulk(dst, c.Group)
	if c.Complexity != "" {
		dst = appendBulk(dst, "complexity")
		dst = appendBulk(dst, c.Complexity)
	}
	if c.DocFlags != 0 {
		dst = appendBulk(dst, "doc_flags")
		dst = appendBitNames(dst, uint64(c.DocFlags), docFlagNames[:], resp3)
	}
	if c.DeprecatedSince != "" {
		dst = appendBulk(dst, "deprecated_since")
		dst = appendBulk(dst, c.DeprecatedSince)
	}
	if c.ReplacedBy != "" {
		dst = appendBulk(dst, "replaced_by")
		dst = appendBulk(dst, c.ReplacedBy)
	}
	if len(c.History) > 0 {
		dst = appendBulk(dst, "history")
		dst = appendSetHeader(dst, len(c.History), resp3)
		for _, h := range c.History {
			dst = appendArrayHeader(dst, 2)
			dst = appendBulk(dst, h.Version)
			dst = appendBulk(dst, h.Changes)
		}
	}
	if len(c.Args) > 0 {
		dst = appendBulk(dst, "arguments")
		dst = appendArgs(dst, c.Args, resp3)
	}
	if len(c.Subcommands) > 0 {
		dst = appendBulk(dst, "subcommands")
		dst = appendMapHeader(dst, len(c.Subcommands), resp3)
		for _, s := range c.Subcommands {
			dst = t.AppendDocs(dst, s, resp3)
		}
	}
	return dst
}

// appendBitNames writes the names of the bits set in f (bit i named
// names[i]) as a set of status replies.
func appendBitNames(dst []byte, f uint64, names []string, resp3 bool) []byte {
	n := 0
	for i := range names {
		if f&(1<<i) != 0 {
			n++
		}
	}
	dst = appendSetHeader(dst, n, resp3)
	for i, name := range names {
		if f&(1<<i) != 0 {
			dst = appendSimple(dst, name)
		}
	}
	return dst
}

// appendArgs writes an argument list as Redis 7.0's addReplyCommandArgList:
// an array of maps. The key order (name, type, key_spec_index, token,
// summary, since, deprecated_since, flags, arguments) follows Redis.
func appendArgs(dst []byte, args []Arg, resp3 bool) []byte {
	dst = appendArrayHeader(dst, len(args))
	for i := range args {
		a := &args[i]
		hasSub := a.Type == ArgOneOf || a.Type == ArgBlock
		n := 2
		for _, present := range [...]bool{
			a.Type == ArgKey, a.Token != "", a.Summary != "", a.Since != "",
			a.DeprecatedSince != "", a.Flags != 0, hasSub,
		} {
			if present {
				n++
			}
		}
		dst = appendMapHeader(dst, n, resp3)
		dst = appendBulk(dst, "name")
		dst = appendBulk(dst, a.Name)
		dst = appendBulk(dst, "type")
		dst = appendBulk(dst, a.Type.String())
		if a.Type == ArgKey {
			dst = appendBulk(dst, "key_spec_index")
			dst = appendInt(dst, a.KeySpecIndex)
		}
		if a.Token != "" {
			dst = appendBulk(dst, "token")
			dst = appendBulk(dst, a.Token)
		}
		if a.Summary != "" {
			dst = appendBulk(dst, "summary")
			dst = appendBulk(dst, a.Summary)
		}
		if a.Since != "" {
			dst = appendBulk(dst, "since")
			dst = appendBulk(dst, a.Since)
		}
		if a.DeprecatedSince != "" {
			dst = appendBulk(dst, "deprecated_since")
			dst = appendBulk(dst, a.DeprecatedSince)
		}
		if a.Flags != 0 {
			dst = appendBulk(dst, "flags")
			dst = appendBitNames(dst, uint64(a.Flags), argFlagNames[:], resp3)
		}
		if hasSub {
			dst = appendBulk(dst, "arguments")
			dst = appendArgs(dst, a.Args, resp3)
		}
	}
	return dst
}
