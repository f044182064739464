package acl

import "testing"

// TestSortPatternsNeedFullKeyRead: SORT's BY (with '*') and GET patterns
// name keys from data, so a user reading only some keys is refused them
// (Redis refuses with "BY/GET option of SORT denied due to insufficient ACL
// permissions"; svcdb with NOPERM at the pattern), while a user reading
// every key, or SORT without patterns, passes.
func TestSortPatternsNeedFullKeyRead(t *testing.T) {
	a := New(table)
	some := mustSet(t, a, "some", "on nopass +@all ~app:*")
	all := mustSet(t, a, "all", "on nopass +@all %R~* ~app:*")
	for _, tc := range []struct {
		cmd  string
		some int // index of the refused argument for "some" (0: allowed); "all" is always allowed
	}{
		{"sort app:l", 0},
		{"sort app:l BY nosort", 0},
		{"sort app:l LIMIT 0 1 BY w_*", 6},
		{"sort app:l GET #", 3},
		{"sort_ro app:l BY nosort GET o_*", 5},
		{"sort app:l STORE app:d", 0},
	} {
		argv := args(tc.cmd)
		cmd := table.Lookup(argv[0])
		r, idx := some.Check(cmd, argv)
		if tc.some == 0 && r != OK || tc.some != 0 && (r != DeniedKey || idx != tc.some) {
			t.Errorf("some: %s: %v %d, want index %d", tc.cmd, r, idx, tc.some)
		}
		if r, _ := all.Check(cmd, argv); r != OK {
			t.Errorf("all: %s: %v", tc.cmd, r)
		}
	}
}
