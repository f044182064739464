package rdb

import (
	"bytes"
	"strings"
	"testing"
)

// A FUNCTION2 record (AppendFunction) loads back as the library's code,
// short and long (LZF-compressible) alike, in file order.
func TestFunctionRecords(t *testing.T) {
	short := "#!lua name=a\nredis.register_function('f', function() return 1 end)"
	long := "#!lua name=b\n" + strings.Repeat("-- padding padding padding\n", 50) + "redis.register_function('g', function() return 2 end)"
	var recs []byte
	recs = AppendFunction(recs, []byte(short))
	recs = AppendFunction(recs, []byte(long))
	info, err := Load(bytes.NewReader(file("0010", recs)), func(*Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Functions) != 2 || string(info.Functions[0]) != short || string(info.Functions[1]) != long {
		t.Fatalf("Functions = %q", info.Functions)
	}
}
