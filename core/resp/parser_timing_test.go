package resp

import (
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
