package shard

import (
	"sync"
	"testing"
	"time"
)

// TestAcquireParksAndWakes: goroutines that find a token held past the
// spins park, and every one of them gets the token in turn once it is let
// go, with mutual exclusion (the race detector checks the plain counter).
func TestAcquireParksAndWakes(t *testing.T) {
	rt := &Runtime{}
	s := newShard(0, 4, nil)
	rt.acquire(s)
	const waiters, rounds = 8, 200
	var wg sync.WaitGroup
	counter := 0
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				rt.acquire(s)
				counter++
				s.letGo()
			}
		}()
	}
	// Hold on long enough for them all to park.
	deadline := time.Now().Add(5 * time.Second)
	for s.tokenWaiters.Load() < waiters && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := s.tokenWaiters.Load(); got != waiters {
		t.Fatalf("parked waiters: got %d; want %d", got, waiters)
	}
	s.letGo()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("waiters still parked (%d) with the token free: a wake-up was lost", s.tokenWaiters.Load())
	}
	if counter != waiters*rounds {
		t.Fatalf("counter: got %d; want %d", counter, waiters*rounds)
	}
	if s.tokenWaiters.Load() != 0 || s.token.Load() != 0 {
		t.Fatalf("after: %d waiters, token %d; want 0, 0", s.tokenWaiters.Load(), s.token.Load())
	}
}

// TestAcquireAgainstTryAcquire mixes parked acquirers with producers that
// only ever tryAcquire (TryExec), the case where a woken waiter loses the
// token and must be woken again by the taker.
func TestAcquireAgainstTryAcquire(t *testing.T) {
	rt := &Runtime{}
	s := newShard(0, 4, nil)
	var wg sync.WaitGroup
	counter := 0
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s.tryAcquire() {
					counter++
					time.Sleep(10 * time.Microsecond) // hold past acquire's spins
					s.letGo()
				}
				// Not a hot loop: on a loaded machine a producer that retakes
				// the token the moment it is free starves the woken waiter
				// (which then parks again, correctly) until the deadline.
				time.Sleep(10 * time.Microsecond)
			}
		}()
	}
	var acq sync.WaitGroup
	for range 4 {
		acq.Add(1)
		go func() {
			defer acq.Done()
			for range 300 {
				rt.acquire(s)
				counter++
				s.letGo()
			}
		}()
	}
	done := make(chan struct{})
	go func() { acq.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("acquirers stuck (%d parked): a wake-up was lost", s.tokenWaiters.Load())
	}
	close(stop)
	wg.Wait()
	if counter < 4*300 {
		t.Fatalf("counter: got %d; want >= %d", counter, 4*300)
	}
}
