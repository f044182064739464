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

// BenchmarkRunLoop is a Lua loop of 1000 additions, with the kill switch
// (SCRIPT KILL: gopher-lua checks the context before every instruction) and
// without it: what busy-reply-threshold support costs.
func BenchmarkRunLoop(b *testing.B) {
	for _, withKill := range []bool{true, false} {
		name := "kill-switch"
		if !withKill {
			name = "no-context"
		}
		b.Run(name, func(b *testing.B) {
			e := New(Options{})
			if !withKill {
				e.vm.ls.RemoveContext()
			}
			s, err := e.Load([]byte("local s = 0 for i = 1, 1000 do s = s + i end return s"))
			if err != nil {
				b.Fatal(err)
			}
			var out []byte
			for b.Loop() {
				out = e.Run(s, nil, nil, getCaller{}, false, out[:0])
			}
		})
	}
}
