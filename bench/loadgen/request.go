package loadgen

import "strconv"

// requestBuilder appends RESP multibulk SET and GET requests from pre-built
// pieces. Only the key varies per request: its length header and digits are
// appended with strconv.AppendUint into the caller's reused buffer, so a
// request costs no allocation once that buffer has grown to its working size.
//
//	SET: *3\r\n$3\r\nSET\r\n  $<len>\r\n<prefix><n>\r\n  $<size>\r\n<data>\r\n
//	     └─── setHead ────┘  └────── appendKey ───────┘  └───── value ──────┘
type requestBuilder struct {
	setHead []byte
	getHead []byte
	prefix  []byte
	value   []byte // "$<size>\r\n<data>\r\n"
}

func newRequestBuilder(prefix string, dataSize int) *requestBuilder {
	v := make([]byte, 0, dataSize+24)
	v = append(v, '$')
	v = strconv.AppendInt(v, int64(dataSize), 10)
	v = append(v, "\r\n"...)
	for i := 0; i < dataSize; i++ {
		v = append(v, 'x')
	}
	v = append(v, "\r\n"...)
	return &requestBuilder{
		setHead: []byte("*3\r\n$3\r\nSET\r\n"),
		getHead: []byte("*2\r\n$3\r\nGET\r\n"),
		prefix:  []byte(prefix),
		value:   v,
	}
}

func (b *requestBuilder) appendSet(dst []byte, key uint64) []byte {
	dst = append(dst, b.setHead...)
	dst = b.appendKey(dst, key)
	return append(dst, b.value...)
}

func (b *requestBuilder) appendGet(dst []byte, key uint64) []byte {
	dst = append(dst, b.getHead...)
	return b.appendKey(dst, key)
}

func (b *requestBuilder) appendKey(dst []byte, key uint64) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b.prefix)+decimalDigits(key)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, b.prefix...)
	dst = strconv.AppendUint(dst, key, 10)
	return append(dst, "\r\n"...)
}

// maxRequestSize bounds one request's encoding, to size write buffers once.
func (b *requestBuilder) maxRequestSize() int {
	const keyHeader = 1 + 20 + 2 + 2 // '$', length digits, two CRLFs
	return len(b.setHead) + keyHeader + len(b.prefix) + 20 + len(b.value)
}

func decimalDigits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}
