package netloop_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestGeoDifferential adds the same random positions (clusters, spread over
// the globe, near the poles and the date line; listpack and skiplist sets)
// to svcdb and a real redis-server and runs random GEOSEARCH,
// GEOSEARCHSTORE, GEORADIUS, GEOPOS, GEOHASH and GEODIST on both: replies
// must be equal, except that a distance printed with four decimals may
// differ by one in the last place (Go's and glibc's sin, cos and asin can
// differ in the last bit; docs/compatibility.md).
func TestGeoDifferential(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	ctx := context.Background()
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ref.Close()

	seed := int64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	do := func(args ...any) (any, any) {
		t.Helper()
		a, errA := ours.Do(ctx, args...).Result()
		b, errB := ref.Do(ctx, args...).Result()
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%v: error %v, redis-server %v", args, errA, errB)
		}
		return a, b
	}
	same := func(args ...any) {
		t.Helper()
		a, b := do(args...)
		if !geoEqual(a, b) {
			t.Fatalf("%v:\n svcdb        %v\n redis-server %v", args, a, b)
		}
	}

	point := func() (float64, float64) {
		switch rng.Intn(5) {
		case 0: // a city-sized cluster
			return 2.35 + rng.Float64()*0.2, 48.85 + rng.Float64()*0.2
		case 1: // near the date line
			return 179.5 + rng.Float64()*0.5*float64(1-2*rng.Intn(2)), rng.Float64()*10 - 5
		case 2: // near a pole
			return rng.Float64()*360 - 180, 80 + rng.Float64()*5.05
		}
		return rng.Float64()*360 - 180, rng.Float64()*170.1 - 85.05
	}
	keys := []string{"g:small", "g:big"}
	for ki, key := range keys {
		n := []int{60, 1500}[ki]
		args := []any{"GEOADD", key}
		for i := 0; i < n; i++ {
			lon, lat := point()
			args = append(args, lon, lat, "m"+strconv.Itoa(i))
		}
		same(args...)
		same("OBJECT", "ENCODING", key)
	}
	units := []string{"m", "km", "ft", "mi"}
	for round := 0; round < 400; round++ {
		key := keys[rng.Intn(2)]
		n := []int{60, 1500}[map[string]int{"g:small": 0, "g:big": 1}[key]]
		member := "m" + strconv.Itoa(rng.Intn(n))
		unit := units[rng.Intn(len(units))]
		scale := map[string]float64{"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.34}[unit]
		dist := math.Pow(10, rng.Float64()*7) / scale // 1 m .. 10000 km
		var args []any
		store := rng.Intn(6) == 0
		if store {
			args = []any{"GEOSEARCHSTORE", "g:dst", key}
		} else {
			args = []any{"GEOSEARCH", key}
		}
		if rng.Intn(2) == 0 {
			args = append(args, "FROMMEMBER", member)
		} else {
			lon, lat := point()
			args = append(args, "FROMLONLAT", lon, lat)
		}
		if rng.Intn(2) == 0 {
			args = append(args, "BYRADIUS", dist, unit)
		} else {
			args = append(args, "BYBOX", dist*(0.2+rng.Float64()*2), dist*(0.2+rng.Float64()*2), unit)
		}
		switch rng.Intn(3) {
		case 0:
			args = append(args, "ASC")
		case 1:
			args = append(args, "DESC")
		}
		if rng.Intn(3) == 0 {
			args = append(args, "COUNT", 1+rng.Intn(20))
			if rng.Intn(3) == 0 {
				args = append(args, "ANY")
			}
		}
		if store {
			if rng.Intn(2) == 0 {
				args = append(args, "STOREDIST")
			}
			same(args...)
			a, _ := ours.ZRange(ctx, "g:dst", 0, -1).Result()
			b, _ := ref.ZRange(ctx, "g:dst", 0, -1).Result()
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%v: stored %v, redis-server %v", args, a, b)
			}
			continue
		}
		for _, opt := range []string{"WITHCOORD", "WITHDIST", "WITHHASH"} {
			if rng.Intn(2) == 0 {
				args = append(args, opt)
			}
		}
		same(args...)
		if round%10 == 0 {
			lon, lat := point()
			same("GEORADIUS", key, lon, lat, dist, unit, "WITHDIST", "ASC", "COUNT", 5)
			same("GEORADIUSBYMEMBER_RO", key, member, dist, unit, "WITHCOORD")
			m2 := "m" + strconv.Itoa(rng.Intn(n))
			same("GEOPOS", key, member, m2, "nosuch")
			same("GEOHASH", key, member, m2, "nosuch")
			same("GEODIST", key, member, m2, unit)
		}
	}
}

// geoEqual compares two replies; bulk strings that are both decimal
// numbers with four decimals (distances) may differ by 0.0001.
func geoEqual(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !geoEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		dot := len(x) - 5
		return err1 == nil && err2 == nil && dot > 0 && x[dot] == '.' && math.Abs(fx-fy) <= 0.000101
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
