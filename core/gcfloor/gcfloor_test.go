package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// goal is the runtime's goal for a percent, as Percent models it.
func goal(p int, live, scan int64) int64 {
	return max(live+(live+scan)*int64(p)/100, runtimeMinimum*int64(p)/100)
}

func TestPercentPutsTheGoalAtTheFloor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name              string
		base              int
		floor, live, scan int64
		want              int // -2: any percent whose goal is the floor (within 1%)
	}{
		{"no floor", 100, 0, 5 * mib, mib, 100},
		{"off stays off", -1, 64 * mib, 5 * mib, mib, -1},
		{"small heap", 100, 64 * mib, 6 * mib, mib, -2},
		{"tiny heap: the runtime minimum is the floor", 100, 64 * mib, 1 * mib, 0, 1600},
		{"before the first cycle", 100, 64 * mib, 0, 0, 1600},
		{"over half the floor: the base", 100, 64 * mib, 40 * mib, mib, 100},
		{"at scale: the base", 100, 64 * mib, 2000 * mib, 10 * mib, 100},
		{"GOGC=400 reaches it", 400, 64 * mib, 14 * mib, mib, 400},
		{"GOGC=50 below it", 50, 64 * mib, 20 * mib, mib, -2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Percent(c.base, c.floor, c.live, c.scan)
			if c.want != -2 {
				if p != c.want {
					t.Fatalf("Percent = %d, want %d", p, c.want)
				}
				return
			}
			if p < c.base {
				t.Fatalf("Percent = %d, below the base %d", p, c.base)
			}
			if g := goal(p, c.live, c.scan); g < c.floor*99/100 || g > c.floor {
				t.Fatalf("Percent = %d: goal %d, want the floor %d", p, g, c.floor)
			}
		})
	}
}

// The goal never falls below the base's and never exceeds max(base's,
// floor), over a sweep of live heaps.
func TestPercentNeverLowersTheGoal(t *testing.T) {
	const floor = 64 << 20
	for live := int64(0); live < 200<<20; live += 1 << 19 {
		for _, base := range []int{25, 100, 300} {
			p := Percent(base, floor, live, 256<<10)
			g, b := goal(p, live, 256<<10), goal(base, live, 256<<10)
			if g < b || g > max(b, floor) {
				t.Fatalf("base %d live %d: percent %d goal %d, base's goal %d", base, live, p, g, b)
			}
		}
	}
}

func heapGoal() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// The runtime's goal follows the floor, after a cycle too, and the base
// returns with no floor and on Stop.
func TestTunerSetsTheRuntimesGoal(t *testing.T) {
	tu := New()
	if tu.Base() != 100 {
		t.Skipf("GOGC is %d in this test's environment", tu.Base())
	}
	const floor = 64 << 20
	tu.Start()
	defer tu.Stop()
	tu.SetFloor(floor)
	if g := heapGoal(); g < floor*95/100 || g > floor*105/100 {
		t.Fatalf("goal %d after SetFloor(%d)", g, floor)
	}
	before := tu.Cycles()
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); tu.Cycles() == before; {
		if time.Now().After(deadline) {
			t.Fatal("no cleanup after a completed cycle")
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	tu.SetFloor(floor) // the apply the wake-up starts may still be running
	if g := heapGoal(); g < floor*95/100 || g > floor*105/100 {
		t.Fatalf("goal %d after a cycle, floor %d", g, floor)
	}
	if tu.Percent() <= 100 {
		t.Fatalf("percent %d with a small heap under a 64 MiB floor", tu.Percent())
	}
	tu.SetFloor(0)
	if tu.Percent() != 100 {
		t.Fatalf("percent %d with no floor", tu.Percent())
	}
	tu.SetFloor(floor)
	tu.Stop()
	if tu.Percent() != 100 || runtimeGOGC() != 100 {
		t.Fatalf("after Stop: percent %d, runtime's %d", tu.Percent(), runtimeGOGC())
	}
}

func runtimeGOGC() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
