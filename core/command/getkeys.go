package command

import "github.com/svcdb/svcdb/core/resp"

// Key finders for the commands whose key specs Redis marks "unknown", after
// their getkeys_proc in Redis 7.0's src/db.c. KeysWithFlags calls them.

// sortGetKeys is Redis' sortGetKeys: the sorted key, and the last STORE's
// destination (LIMIT skips two arguments, GET and BY one, as SORT parses
// them). Keys named by BY and GET patterns depend on data and are not
// reported, as in Redis.
func sortGetKeys(args [][]byte, dst []int, flags []KeyFlag) ([]int, []KeyFlag, bool) {
	if len(args) < 2 {
		return dst, flags, false
	}
	dst = append(dst, 1)
	flags = append(flags, KeyRO|KeyAccess)
	store := -1
	for i := 2; i < len(args); i++ {
		switch {
		case resp.EqualFold(args[i], "limit"):
			i += 2
		case resp.EqualFold(args[i], "get"), resp.EqualFold(args[i], "by"):
			i++
		case resp.EqualFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		dst = append(dst, store)
		flags = append(flags, KeyOW|KeyUpdate)
	}
	return dst, flags, true
}

// sortROGetKeys is Redis' sortROGetKeys: the sorted key only.
func sortROGetKeys(args [][]byte, dst []int, flags []KeyFlag) ([]int, []KeyFlag, bool) {
	if len(args) < 2 {
		return dst, flags, false
	}
	return append(dst, 1), append(flags, KeyRO|KeyAccess), true
}

// setGetKeys attaches the key finders to their commands in cmds.
func setGetKeys(cmds []*Command) {
	for _, c := range cmds {
		switch c.Name {
		case "sort":
			c.getKeys = sortGetKeys
		case "sort_ro":
			c.getKeys = sortROGetKeys
		}
	}
}
