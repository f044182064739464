package command

import "github.com/svcdb/svcdb/core/resp"

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
		return resp.AppendNull(dst, resp3)
	}
	dst = resp.AppendArrayHeader(dst, 10)
	dst = resp.AppendBulkString(dst, c.FullName)
	dst = appendInt(dst, c.Arity)
	dst = appendCommandFlags(dst, c.Flags, resp3)
	dst = appendInt(dst, c.FirstKey)
	dst = appendInt(dst, c.LastKey)
	dst = appendInt(dst, c.Step)
	dst = appendStatusSet(dst, c.ACLCategories, resp3)
	dst = resp.AppendSetHeader(dst, len(c.Tips), resp3)
	for _, tip := range c.Tips {
		dst = resp.AppendBulkString(dst, tip)
	}
	dst = resp.AppendSetHeader(dst, len(c.KeySpecs), resp3)
	for i := range c.KeySpecs {
		dst = appendKeySpec(dst, &c.KeySpecs[i], resp3)
	}
	// Redis replies with an empty *set* when there are no subcommands and
	// with an array otherwise; keep the quirk, clients see it under RESP3.
	if len(c.Subcommands) == 0 {
		return resp.AppendSetHeader(dst, 0, resp3)
	}
	dst = resp.AppendArrayHeader(dst, len(c.Subcommands))
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
	dst = resp.AppendSetHeader(dst, n, resp3)
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			dst = resp.AppendSimpleString(dst, fn.name)
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
	dst = resp.AppendSetHeader(dst, n, resp3)
	for _, fn := range keyFlagNames {
		if f&fn.f != 0 {
			dst = resp.AppendSimpleString(dst, fn.name)
		}
	}
	return dst
}

func appendKeySpec(dst []byte, ks *KeySpec, resp3 bool) []byte {
	n := 3
	if ks.Notes != "" {
		n++
	}
	dst = resp.AppendMapHeader(dst, n, resp3)
	if ks.Notes != "" {
		dst = resp.AppendBulkString(dst, "notes")
		dst = resp.AppendBulkString(dst, ks.Notes)
	}
	dst = resp.AppendBulkString(dst, "flags")
	dst = appendKeyFlags(dst, ks.Flags, resp3)

	dst = resp.AppendBulkString(dst, "begin_search")
	dst = resp.AppendMapHeader(dst, 2, resp3)
	dst = resp.AppendBulkString(dst, "type")
	switch ks.BeginSearch.Type {
	case BeginIndex:
		dst = resp.AppendBulkString(dst, "index")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 1, resp3)
		dst = resp.AppendBulkString(dst, "index")
		dst = appendInt(dst, ks.BeginSearch.Index)
	case BeginKeyword:
		dst = resp.AppendBulkString(dst, "keyword")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 2, resp3)
		dst = resp.AppendBulkString(dst, "keyword")
		dst = resp.AppendBulkString(dst, ks.BeginSearch.Keyword)
		dst = resp.AppendBulkString(dst, "startfrom")
		dst = appendInt(dst, ks.BeginSearch.StartFrom)
	default:
		dst = resp.AppendBulkString(dst, "unknown")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 0, resp3)
	}

	dst = resp.AppendBulkString(dst, "find_keys")
	dst = resp.AppendMapHeader(dst, 2, resp3)
	dst = resp.AppendBulkString(dst, "type")
	switch ks.FindKeys.Type {
	case FindRange:
		dst = resp.AppendBulkString(dst, "range")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 3, resp3)
		dst = resp.AppendBulkString(dst, "lastkey")
		dst = appendInt(dst, ks.FindKeys.LastKey)
		dst = resp.AppendBulkString(dst, "keystep")
		dst = appendInt(dst, ks.FindKeys.KeyStep)
		dst = resp.AppendBulkString(dst, "limit")
		dst = appendInt(dst, ks.FindKeys.Limit)
	case FindKeyNum:
		dst = resp.AppendBulkString(dst, "keynum")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 3, resp3)
		dst = resp.AppendBulkString(dst, "keynumidx")
		dst = appendInt(dst, ks.FindKeys.KeyNumIdx)
		dst = resp.AppendBulkString(dst, "firstkey")
		dst = appendInt(dst, ks.FindKeys.FirstKey)
		dst = resp.AppendBulkString(dst, "keystep")
		dst = appendInt(dst, ks.FindKeys.KeyStep)
	default:
		dst = resp.AppendBulkString(dst, "unknown")
		dst = resp.AppendBulkString(dst, "spec")
		dst = resp.AppendMapHeader(dst, 0, resp3)
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
	dst = resp.AppendBulkString(dst, c.FullName)
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
	dst = resp.AppendMapHeader(dst, n, resp3)
	dst = resp.AppendBulkString(dst, "summary")
	dst = resp.AppendBulkString(dst, c.Summary)
	dst = resp.AppendBulkString(dst, "since")
	dst = resp.AppendBulkString(dst, c.Since)
	dst = resp.AppendBulkString(dst, "group")
	dst = resp.AppendBulkString(dst, c.Group)
	if c.Complexity != "" {
		dst = resp.AppendBulkString(dst, "complexity")
		dst = resp.AppendBulkString(dst, c.Complexity)
	}
	if c.DocFlags != 0 {
		dst = resp.AppendBulkString(dst, "doc_flags")
		dst = appendBitNames(dst, uint64(c.DocFlags), docFlagNames[:], resp3)
	}
	if c.DeprecatedSince != "" {
		dst = resp.AppendBulkString(dst, "deprecated_since")
		dst = resp.AppendBulkString(dst, c.DeprecatedSince)
	}
	if c.ReplacedBy != "" {
		dst = resp.AppendBulkString(dst, "replaced_by")
		dst = resp.AppendBulkString(dst, c.ReplacedBy)
	}
	if len(c.History) > 0 {
		dst = resp.AppendBulkString(dst, "history")
		dst = resp.AppendSetHeader(dst, len(c.History), resp3)
		for _, h := range c.History {
			dst = resp.AppendArrayHeader(dst, 2)
			dst = resp.AppendBulkString(dst, h.Version)
			dst = resp.AppendBulkString(dst, h.Changes)
		}
	}
	if len(c.Args) > 0 {
		dst = resp.AppendBulkString(dst, "arguments")
		dst = appendArgs(dst, c.Args, resp3)
	}
	if len(c.Subcommands) > 0 {
		dst = resp.AppendBulkString(dst, "subcommands")
		dst = resp.AppendMapHeader(dst, len(c.Subcommands), resp3)
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
	dst = resp.AppendSetHeader(dst, n, resp3)
	for i, name := range names {
		if f&(1<<i) != 0 {
			dst = resp.AppendSimpleString(dst, name)
		}
	}
	return dst
}

// appendArgs writes an argument list as Redis 7.0's addReplyCommandArgList:
// an array of maps. The key order (name, type, key_spec_index, token,
// summary, since, deprecated_since, flags, arguments) follows Redis.
func appendArgs(dst []byte, args []Arg, resp3 bool) []byte {
	dst = resp.AppendArrayHeader(dst, len(args))
	for i := range args {
		a := &args[i]
		hasSub := a.Type == ArgOneOf || a.Type == ArgBlock
		n := 2
		// A pure token always has its token, even the empty one (MIGRATE's
		// empty_string, whose token is "").
		hasToken := a.Token != "" || a.Type == ArgPureToken
		for _, present := range [...]bool{
			a.Type == ArgKey || a.PatternKeys, hasToken, a.Summary != "", a.Since != "",
			a.DeprecatedSince != "", a.Flags != 0, hasSub,
		} {
			if present {
				n++
			}
		}
		dst = resp.AppendMapHeader(dst, n, resp3)
		dst = resp.AppendBulkString(dst, "name")
		dst = resp.AppendBulkString(dst, a.Name)
		dst = resp.AppendBulkString(dst, "type")
		dst = resp.AppendBulkString(dst, a.Type.String())
		if a.Type == ArgKey || a.PatternKeys {
			dst = resp.AppendBulkString(dst, "key_spec_index")
			dst = appendInt(dst, a.KeySpecIndex)
		}
		if hasToken {
			dst = resp.AppendBulkString(dst, "token")
			dst = resp.AppendBulkString(dst, a.Token)
		}
		if a.Summary != "" {
			dst = resp.AppendBulkString(dst, "summary")
			dst = resp.AppendBulkString(dst, a.Summary)
		}
		if a.Since != "" {
			dst = resp.AppendBulkString(dst, "since")
			dst = resp.AppendBulkString(dst, a.Since)
		}
		if a.DeprecatedSince != "" {
			dst = resp.AppendBulkString(dst, "deprecated_since")
			dst = resp.AppendBulkString(dst, a.DeprecatedSince)
		}
		if a.Flags != 0 {
			dst = resp.AppendBulkString(dst, "flags")
			dst = appendBitNames(dst, uint64(a.Flags), argFlagNames[:], resp3)
		}
		if hasSub {
			dst = resp.AppendBulkString(dst, "arguments")
			dst = appendArgs(dst, a.Args, resp3)
		}
	}
	return dst
}
