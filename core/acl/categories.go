package acl

import "strings"

// Categories are Redis 7.0's ACL categories in its order (acl.c
// ACLCommandCategories): ACL CAT lists them so, and the compact description
// of a user's command rules tries them in this order.
var Categories = [...]string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// categoryIndex returns the index of a category name (case-insensitive,
// without '@'), or -1.
func categoryIndex(name string) int {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}
