package scripting

import "testing"

type getCaller struct{}

func (getCaller) Call(argv [][]byte, resp3 bool, repl int, dst []byte) ([]byte, string) {
	return append(dst, "$5\r\nvalue\r\n"...), ""
}
func (getCaller) CheckACL(argv [][]byte) (bool, bool) { return true, true }

// BenchmarkRunGet is the engine's share of an EVALSHA of a one-GET script:
// KEYS and ARGV, the call, the reply's conversion both ways.
func BenchmarkRunGet(b *testing.B) {
	e := New(Options{})
	s, err := e.Load([]byte("return redis.call('GET', KEYS[1])"))
	if err != nil {
		b.Fatal(err)
	}
	keys := [][]byte{[]byte("key:1")}
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = e.Run(s, keys, nil, getCaller{}, false, out[:0])
	}
}
