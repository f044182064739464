package shard

import "testing"

// checkValueWords checks that every key's value words agree with its
// encoding (keyspace.DB.VerifyValueWords) in every database of rt.
// It holds each shard in turn.
func checkValueWords(t *testing.T, rt *Runtime) {
	t.Helper()
	for i, s := range rt.shards {
		release := rt.HoldShard(i)
		for n, d := range s.store.DBs() {
			if err := d.VerifyValueWords(); err != nil {
				release()
				t.Fatalf("shard %d db %d: %v", i, n, err)
			}
		}
		release()
	}
}
