package resp

import "testing"

func benchAppend(b *testing.B, enc func(dst []byte) []byte) {
	dst := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		dst = enc(dst[:0])
	}
	Sink += len(dst)
}

func BenchmarkAppendBulk(b *testing.B) {
	v := []byte("some value of moderate length")
	benchAppend(b, func(d []byte) []byte { return AppendBulk(d, v) })
}

func BenchmarkAppendInt(b *testing.B) {
	benchAppend(b, func(d []byte) []byte { return AppendInt(d, 1234567) })
}

func BenchmarkAppendBulkInt(b *testing.B) {
	benchAppend(b, func(d []byte) []byte { return AppendBulkInt(d, 1234567) })
}

func BenchmarkAppendDouble(b *testing.B) {
	benchAppend(b, func(d []byte) []byte { return AppendDouble(d, 1.1, false) })
}

func BenchmarkAppendErrUnknownCommand(b *testing.B) {
	name := []byte("foo")
	args := [][]byte{[]byte("a"), []byte("bb")}
	benchAppend(b, func(d []byte) []byte { return AppendErrUnknownCommand(d, name, args) })
}

func BenchmarkReadReply(b *testing.B) {
	in := []byte("*3\r\n$3\r\nfoo\r\n:42\r\n+OK\r\n")
	b.ReportAllocs()
	for b.Loop() {
		_, n, _ := ReadReply(in)
		Sink += n
	}
}

func BenchmarkSkipReply(b *testing.B) {
	in := []byte("*3\r\n$3\r\nfoo\r\n:42\r\n+OK\r\n")
	b.ReportAllocs()
	for b.Loop() {
		n, _ := SkipReply(in)
		Sink += n
	}
}
