package resp

import (
	"strconv"
	"strings"
	"testing"
)

// Sink keeps results alive so the compiler cannot drop the work.
var Sink int

func benchParse(b *testing.B, in []byte) {
	var p Parser
	argsbuf := make([][]byte, 0, 16)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		buf := in
		for len(buf) > 0 {
			args, n, err := p.Parse(buf, argsbuf)
			if err != nil || n == 0 {
				b.Fatalf("n %d err %v", n, err)
			}
			argsbuf = args
			Sink += len(args)
			buf = buf[n:]
		}
	}
}

func BenchmarkParseGET(b *testing.B) {
	benchParse(b, []byte(mb("GET", "key:000000000001")))
}

func BenchmarkParseSET(b *testing.B) {
	benchParse(b, []byte(mb("SET", "key:000000000001", strings.Repeat("v", 64))))
}

// BenchmarkParsePipeline100 is 100 GET/SET commands per buffer, as a
// pipelining client sends them; ns/op is per 100 commands.
func BenchmarkParsePipeline100(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 50; i++ {
		sb.WriteString(mb("SET", "key:000000000001", strings.Repeat("v", 64)))
		sb.WriteString(mb("GET", "key:000000000001"))
	}
	benchParse(b, []byte(sb.String()))
}

func BenchmarkParseInline(b *testing.B) {
	benchParse(b, []byte("SET key:000000000001 value\r\n"))
}

func BenchmarkParseInlineQuoted(b *testing.B) {
	benchParse(b, []byte(`SET "key 1" "a\x41\n" 'it\'s'`+"\r\n"))
}

func BenchmarkParseBigBulk1MiB(b *testing.B) {
	benchParse(b, []byte(mb("SET", "k", strings.Repeat("x", 1<<20))))
}

// BenchmarkParseResumed16 feeds a SET in 16-byte reads, resuming each time.
func BenchmarkParseResumed16(b *testing.B) {
	in := []byte(mb("SET", "key:000000000001", strings.Repeat("v", 64)))
	var p Parser
	argsbuf := make([][]byte, 0, 16)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		for i := 16; ; i += 16 {
			args, n, err := p.Parse(in[:min(i, len(in))], argsbuf)
			if err != nil {
				b.Fatal(err)
			}
			if n > 0 {
				argsbuf = args
				break
			}
		}
	}
}

// manyArgs is RPUSH key followed by n small elements: the issue's
// 2M-argument command.
func manyArgs(n int) []byte {
	var sb strings.Builder
	sb.WriteString("*" + strconv.Itoa(n+2) + "\r\n$5\r\nRPUSH\r\n$3\r\nlst\r\n")
	for i := range n {
		e := strconv.Itoa(i)
		sb.WriteString("$" + strconv.Itoa(len(e)) + "\r\n" + e + "\r\n")
	}
	return []byte(sb.String())
}

// BenchmarkParseManyArgs parses a 2M-argument command with a fresh parser
// and argument slice each time (the cost a client sending one pays),
// whole, and as it arrives in 64 KiB reads, resumed after each (each
// parse sees the whole buffered command, as gnet's Peek gives it).
func BenchmarkParseManyArgs(b *testing.B) {
	in := manyArgs(2_000_000)
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			var p Parser
			args, n, err := p.Parse(in, nil)
			if err != nil || n != len(in) {
				b.Fatalf("n %d err %v", n, err)
			}
			Sink += len(args)
		}
	})
	b.Run("reads=64KiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			var p Parser
			parses := 0
			for have := 64 << 10; ; have += 64 << 10 {
				have = min(have, len(in))
				if need := p.Need(); need > have {
					continue
				}
				parses++
				args, n, err := p.Parse(in[:have], nil)
				if err != nil {
					b.Fatal(err)
				}
				if n > 0 {
					Sink += len(args)
					break
				}
			}
			b.ReportMetric(float64(parses), "parses/op")
		}
	})
}
