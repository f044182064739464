package scripting

import (
	"testing"
	"time"
)

// TestRunStatistics: each run counts in its script's or function's
// statistics and in the engine's totals; an error reply counts as failed;
// SlowScripts lists those that ran, slowest run first.
func TestRunStatistics(t *testing.T) {
	e := New(Options{})
	fast, _ := e.Load([]byte("return 1"))
	slow, _ := e.Load([]byte("local i = 0 while i < 300000 do i = i + 1 end return i"))
	bad, _ := e.Load([]byte("error('boom')"))
	if _, err := e.Load([]byte("return 'never run'")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.LoadLibrary([]byte("#!lua name=lib\nredis.register_function('f', function(keys, args) return #keys end)"), false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.Run(fast, nil, nil, echoCaller{}, false, nil)
	}
	e.Run(slow, nil, nil, echoCaller{}, false, nil)
	e.Run(bad, nil, nil, echoCaller{}, false, nil)
	e.Call(e.LookupFunction([]byte("F")), [][]byte{[]byte("k")}, nil, echoCaller{}, false, nil)

	if got, want := e.Totals(), (Totals{EvalRuns: 5, EvalFailed: 1, FunctionRuns: 1}); got != want {
		t.Errorf("Totals = %+v, want %+v", got, want)
	}
	list := e.SlowScripts(10)
	if len(list) != 4 {
		t.Fatalf("SlowScripts lists %d, want the 4 that ran: %+v", len(list), list)
	}
	if list[0].Name != slow.SHA || list[0].Calls != 1 || list[0].Max <= 0 || list[0].Source != slow.Body {
		t.Errorf("slowest: %+v", list[0])
	}
	for _, r := range list {
		switch r.Name {
		case fast.SHA:
			if r.Calls != 3 || r.Failed != 0 || r.Total < r.Max || r.Kind != "eval" {
				t.Errorf("fast: %+v", r)
			}
		case bad.SHA:
			if r.Calls != 1 || r.Failed != 1 {
				t.Errorf("bad: %+v", r)
			}
		case "f":
			if r.Kind != "function" || r.Library != "lib" || r.Calls != 1 || time.Since(r.LastRun) > time.Minute {
				t.Errorf("function: %+v", r)
			}
		}
	}
	for i := 1; i < len(list); i++ {
		if list[i].Max > list[i-1].Max {
			t.Errorf("not slowest first: %v after %v", list[i].Max, list[i-1].Max)
		}
	}
	if got := e.SlowScripts(1); len(got) != 1 || got[0].Name != slow.SHA {
		t.Errorf("SlowScripts(1) = %+v", got)
	}
}
