package loadgen

import (
	"testing"
)

func TestScanReplyEverySplit(t *testing.T) {
	cases := []struct {
		in   string
		kind replyKind
	}{
		{"+OK\r\n", replyValue},
		{"-ERR wrong number of arguments for 'get' command\r\n", replyError},
		{":12345\r\n", replyValue},
		{":-1\r\n", replyValue},
		{"$-1\r\n", replyNull},
		{"$0\r\n\r\n", replyValue},
		{"$5\r\nhello\r\n", replyValue},
		{"$4\r\na\r\nb\r\n", replyValue}, // CRLF inside a bulk is payload
		{"*-1\r\n", replyNull},
		{"*0\r\n", replyValue},
		{"*2\r\n$3\r\nfoo\r\n:1\r\n", replyValue},
		{"*2\r\n*2\r\n+a\r\n+b\r\n*1\r\n$-1\r\n", replyValue},
		{"_\r\n", replyNull},
		{",3.14\r\n", replyValue},
		{"#t\r\n", replyValue},
		{"(12345678901234567890\r\n", replyValue},
		{"!21\r\nSYNTAX invalid syntax\r\n", replyError},
		{"=15\r\ntxt:Some string\r\n", replyValue},
		{"%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", replyValue},
		{"~2\r\n+a\r\n+b\r\n", replyValue},
		{">3\r\n+message\r\n+ch\r\n$2\r\nhi\r\n", replyValue},
		{"|1\r\n+ttl\r\n:3600\r\n$2\r\nok\r\n", replyValue}, // attribute then reply
		{"|1\r\n+ttl\r\n:3600\r\n$-1\r\n", replyNull},
	}
	for _, c := range cases {
		for cut := 0; cut < len(c.in); cut++ {
			n, _, err := scanReply([]byte(c.in[:cut]))
			if n != 0 || err != nil {
				t.Errorf("%q cut at %d: got n=%d err=%v; want incomplete", c.in, cut, n, err)
			}
		}
		// Followed by the start of another reply, it must stop at its end.
		for _, tail := range []string{"", "+OK\r\n", "$5\r\nhe"} {
			n, kind, err := scanReply([]byte(c.in + tail))
			if err != nil || n != len(c.in) || kind != c.kind {
				t.Errorf("%q+%q: got n=%d kind=%d err=%v; want n=%d kind=%d", c.in, tail, n, kind, err, len(c.in), c.kind)
			}
		}
	}
}

func TestScanReplyRejectsGarbage(t *testing.T) {
	for _, in := range []string{
		"OK\r\n",          // no type byte
		"$5\r\nhelloXY",   // bulk not followed by CRLF
		"$-2\r\n",         // bad null
		"$abc\r\n",        // bad length
		"*-2\r\n",         // bad count
		"*1\r\n$-2\r\n",   // redcon's crasher
		"*1\r\n?what\r\n", // unknown type nested
	} {
		if n, _, err := scanReply([]byte(in)); err == nil {
			t.Errorf("%q: got n=%d and no error; want a protocol error", in, n)
		}
	}
}
