package shard

import (
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGeoSearch: a 5 km radius search, ten nearest, in a set of 20000
// members spread over 2 x 1.2 degrees (about 180 x 130 km) of Sicily.
func BenchmarkGeoSearch(b *testing.B) {
	e := newExecer(b)
	geoadd := e.cmd("geoadd")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		e.run(geoadd, []byte("geoadd"), []byte("geo"),
			strconv.AppendFloat(nil, 13+r.Float64()*2, 'f', 6, 64),
			strconv.AppendFloat(nil, 37.5+r.Float64()*1.2, 'f', 6, 64),
			[]byte("p"+strconv.Itoa(i)))
	}
	search := e.cmd("geosearch")
	args := [][]byte{[]byte("geosearch"), []byte("geo"), []byte("FROMLONLAT"), []byte("13.5"), []byte("38"),
		[]byte("BYRADIUS"), []byte("5"), []byte("km"), []byte("ASC"), []byte("COUNT"), []byte("10")}
	b.ReportAllocs()
	cpu := benchProcessCPU()
	for b.Loop() {
		e.run(search, args...)
	}
	b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// benchGeoSetup is bench/harness' GeoSetup (the GEOSEARCH case of make
// bench), copied: 1,000 places over longitudes 8..19 and latitudes 34..42
// spread by the additive recurrence of the plastic number.
func benchGeoSetup() [][]byte {
	const a1, a2 = 0.7548776662466927, 0.5698402909980532
	frac := func(v float64) float64 { return v - float64(int64(v)) }
	cmd := [][]byte{[]byte("geoadd"), []byte("geo:bench")}
	for i := 1; i <= 1000; i++ {
		x := frac(0.5 + a1*float64(i))
		y := frac(0.5 + a2*float64(i))
		cmd = append(cmd,
			strconv.AppendFloat(nil, 8+11*x, 'f', 6, 64),
			strconv.AppendFloat(nil, 34+8*y, 'f', 6, 64),
			[]byte("place:"+strconv.Itoa(i)))
	}
	return cmd
}

// BenchmarkGeoSearchMakeBench is make bench's GEOSEARCH case: 200 km
// around Palermo over benchGeoSetup's 1,000 places (about 150 within),
// ten nearest.
func BenchmarkGeoSearchMakeBench(b *testing.B) {
	e := newExecer(b)
	e.run(e.cmd("geoadd"), benchGeoSetup()...)
	search := e.cmd("geosearch")
	args := [][]byte{[]byte("geosearch"), []byte("geo:bench"), []byte("FROMLONLAT"), []byte("13.36"), []byte("38.11"),
		[]byte("BYRADIUS"), []byte("200"), []byte("km"), []byte("ASC"), []byte("COUNT"), []byte("10")}
	b.ReportAllocs()
	cpu := benchProcessCPU()
	for b.Loop() {
		e.run(search, args...)
	}
	b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// benchProcessCPU is the CPU time the process has used (user and system),
// in nanoseconds: on a machine shared with other work, wall time per call
// mostly measures the waits for a CPU, CPU time what the call costs.
func benchProcessCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Nanoseconds()
}
