package config

import "testing"

// maxmemory-clients exists (CONFIG GET answers it, as Redis 7.0) but client
// eviction is not implemented, so every value but 0 is refused, from
// CONFIG SET and from a file alike: never accepted and then ignored.
// Redis 7.0 accepts any value here; this is a documented difference
// (docs/security.md).
func TestMaxmemoryClientsOnlyZero(t *testing.T) {
	r := New()
	if got := configSet(r, "maxmemory-clients", "0"); got != "OK" {
		t.Errorf("CONFIG SET maxmemory-clients 0 = %s", got)
	}
	for _, v := range []string{"1", "10mb", "1gb"} {
		want := "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be between 0 and 0 inclusive"
		if got := configSet(r, "maxmemory-clients", v); got != want {
			t.Errorf("CONFIG SET maxmemory-clients %s = %s, want %s", v, got, want)
		}
	}
	if err := New().LoadTOML("x.toml", []byte("[memory]\nmaxmemory-clients = \"10mb\"\n")); err == nil {
		t.Error("a file with maxmemory-clients = 10mb loaded")
	}
}
