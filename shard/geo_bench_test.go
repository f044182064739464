package shard

import (
	"math/rand/v2"
	"strconv"
	"testing"
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
	for b.Loop() {
		e.run(search, args...)
	}
}
