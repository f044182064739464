package config

import "testing"

// maxmemory-clients takes a memory value or a percentage of maxmemory, as
// Redis 7.0's PERCENT_CONFIG: the replies and CONFIG GET texts below were
// recorded from redis-server 7.0.15 (CONFIG SET, then CONFIG GET).
var maxmemoryClientsCases = []struct{ set, reply, get string }{
	{"10%", "OK", "10%"},
	{"0%", "OK", "0"},
	{"100%", "OK", "100%"},
	{"101%", "percentage argument must be less or equal to 100", "100%"},
	{"1.5%", "argument must be a memory or percent value", "100%"},
	{"-1", "argument must be a memory or percent value", "100%"},
	{"-5%", "argument must be a memory or percent value", "100%"},
	{"10mb", "OK", "10485760"},
	{"1k", "OK", "1000"},
	{"5", "OK", "5"},
	{"10 %", "argument must be a memory or percent value", "5"},
	{"50%x", "argument must be a memory or percent value", "5"},
	{"%", "argument must be a memory or percent value", "5"},
	{"+5%", "argument must be a memory or percent value", "5"},
	{"007%", "argument must be a memory or percent value", "5"},
	{"0", "OK", "0"},
}

func TestMaxmemoryClientsParsesLikeRedis(t *testing.T) {
	r := New()
	for _, tc := range maxmemoryClientsCases {
		want := tc.reply
		if want != "OK" {
			want = "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - " + want
		}
		if got := configSet(r, "maxmemory-clients", tc.set); got != want {
			t.Errorf("CONFIG SET maxmemory-clients %q = %s, want %s", tc.set, got, want)
		}
		if got := r.String("maxmemory-clients"); got != tc.get {
			t.Errorf("after %q: CONFIG GET = %q, want %q", tc.set, got, tc.get)
		}
	}
	_ = configSet(r, "maxmemory-clients", "25%")
	if b, p := r.SizeOrPercent("maxmemory-clients"); b != 0 || p != 25 {
		t.Errorf("SizeOrPercent at 25%% = %d, %d", b, p)
	}
	_ = configSet(r, "maxmemory-clients", "2mb")
	if b, p := r.SizeOrPercent("maxmemory-clients"); b != 2<<20 || p != 0 {
		t.Errorf("SizeOrPercent at 2mb = %d, %d", b, p)
	}
	// A file takes both forms, and a percentage renders back as a string.
	for _, v := range []string{`"10%"`, `"10mb"`, `1048576`} {
		f := New()
		if err := f.LoadTOML("x.toml", []byte("[memory]\nmaxmemory-clients = "+v+"\n")); err != nil {
			t.Errorf("file with maxmemory-clients = %s: %v", v, err)
		}
	}
	f := New()
	if err := f.LoadTOML("x.toml", []byte("[memory]\nmaxmemory-clients = \"200%\"\n")); err == nil {
		t.Error("a file with maxmemory-clients = 200% loaded")
	}
	if got := tomlValue(f.Lookup("maxmemory-clients"), "10%"); got != `"10%"` {
		t.Errorf("TOML text of 10%% = %s", got)
	}
}
