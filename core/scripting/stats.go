package scripting

import (
	"sort"
	"sync/atomic"
	"time"
)

// Run statistics: every script and function counts its runs, failures and
// time, and the engine counts runs and kills by kind. They are written by
// the run itself (one at a time: the VM's mutex) and read by diagnostics
// (INFO, /metrics, the debug UI's slow scripts) with atomic loads: a run
// pays two clock reads and a few atomic stores, and allocates nothing.

// runStats are one script's or function's runs.
type runStats struct {
	calls, failed  atomic.Int64
	totalNs, maxNs atomic.Int64
	lastUnixNs     atomic.Int64 // when the last run ended
}

// record adds a run of ns nanoseconds that ended at now. REQUIRES: the
// VM's mutex (so the max needs no compare-and-swap).
func (r *runStats) record(ns, now int64, failed bool) {
	r.calls.Add(1)
	if failed {
		r.failed.Add(1)
	}
	r.totalNs.Add(ns)
	if ns > r.maxNs.Load() {
		r.maxNs.Store(ns)
	}
	r.lastUnixNs.Store(now)
}

// engineStats are the engine's totals since start.
type engineStats struct {
	evalRuns, evalFailed atomic.Int64
	fnRuns, fnFailed     atomic.Int64
	killed               atomic.Int64
}

// Totals are the engine's run counts since start (SCRIPT FLUSH and
// FUNCTION FLUSH do not rewind them): runs of EVAL scripts and of
// functions, those that replied an error (killed ones included), and the
// runs SCRIPT KILL or FUNCTION KILL stopped.
type Totals struct {
	EvalRuns, EvalFailed         int64
	FunctionRuns, FunctionFailed int64
	Killed                       int64
}

// Totals reads the engine's run counts.
func (e *Engine) Totals() Totals {
	st := &e.stats
	return Totals{
		EvalRuns: st.evalRuns.Load(), EvalFailed: st.evalFailed.Load(),
		FunctionRuns: st.fnRuns.Load(), FunctionFailed: st.fnFailed.Load(),
		Killed: st.killed.Load(),
	}
}

// RunStat is one script's or function's runs, as the debug UI's slow
// scripts list shows them.
type RunStat struct {
	Kind    string        `json:"kind"` // "eval" or "function"
	Name    string        `json:"name"` // the SHA1, or the function's name
	Library string        `json:"library,omitempty"`
	Source  string        `json:"source"` // the body's first bytes (a script) or the library's
	Calls   int64         `json:"calls"`
	Failed  int64         `json:"failed"`
	Total   time.Duration `json:"-"`
	Max     time.Duration `json:"-"`
	TotalUS int64         `json:"total_us"`
	MaxUS   int64         `json:"max_us"`
	MeanUS  int64         `json:"mean_us"`
	LastRun time.Time     `json:"last_run"`
}

// sourcePrefix bounds RunStat.Source.
const sourcePrefix = 200

// SlowScripts returns up to n scripts and functions that ran, the slowest
// single run first (ties by total time). The scripts are those still
// cached: SCRIPT FLUSH forgets their statistics with them.
func (e *Engine) SlowScripts(n int) []RunStat {
	var out []RunStat
	add := func(kind, name, lib, src string, r *runStats) {
		calls := r.calls.Load()
		if calls == 0 {
			return
		}
		if len(src) > sourcePrefix {
			src = src[:sourcePrefix]
		}
		total, mx := time.Duration(r.totalNs.Load()), time.Duration(r.maxNs.Load())
		out = append(out, RunStat{
			Kind: kind, Name: name, Library: lib, Source: src,
			Calls: calls, Failed: r.failed.Load(), Total: total, Max: mx,
			TotalUS: total.Microseconds(), MaxUS: mx.Microseconds(), MeanUS: (total / time.Duration(calls)).Microseconds(),
			LastRun: time.Unix(0, r.lastUnixNs.Load()),
		})
	}
	e.mu.RLock()
	for _, s := range e.scripts {
		add("eval", s.SHA, "", s.Body, &s.stats)
	}
	e.mu.RUnlock()
	l := &e.libs
	l.mu.RLock()
	for _, f := range l.funcs {
		add("function", f.Name, f.Lib.Name, f.Lib.Code, &f.stats)
	}
	l.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Max != out[j].Max {
			return out[i].Max > out[j].Max
		}
		return out[i].Total > out[j].Total
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
