package zsets

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/geohash"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// Geo on sorted sets: GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH
// GEOSEARCHSTORE and the GEORADIUS family, as Redis 7.0's src/geo.c. A
// position is a member's score (the 52-bit geohash); the arithmetic is
// package geohash's. What is here: argument parsing and error texts in
// Redis' order, walking the score ranges of the nine cells, and replies.

// registerGeo adds the geo commands' handlers (from Register).
func registerGeo(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("geoadd", cmdGeoAdd, keyspace.RouteKeys)
	add("geodist", cmdGeoDist, keyspace.RouteKeys)
	add("geohash", cmdGeoHash, keyspace.RouteKeys)
	add("geopos", cmdGeoPos, keyspace.RouteKeys)
	add("geosearch", cmdGeoSearch, keyspace.RouteKeys)
	add("geosearchstore", cmdGeoSearchStore, keyspace.RouteKeys)
	// STORE and STOREDIST name a second key (keyword key specs).
	add("georadius", cmdGeoRadius, keyspace.RouteKeySpecs)
	add("georadiusbymember", cmdGeoRadiusByMember, keyspace.RouteKeySpecs)
	add("georadius_ro", cmdGeoRadiusRO, keyspace.RouteKeys)
	add("georadiusbymember_ro", cmdGeoRadiusByMemberRO, keyspace.RouteKeys)
}

const (
	errGeoUnit      = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errGeoMember    = "ERR could not decode requested zset member"
	errGeoNegRadius = "ERR radius cannot be negative"
)

// geoLongLat is extractLongLatOrReply: two floats within Redis' limits.
func geoLongLat(c *keyspace.Ctx, args [][]byte) (lon, lat float64, ok bool) {
	lon, ok1 := values.ParseScore(args[0])
	if !ok1 {
		c.Out = append(c.Out, resp.ErrNotFloat...)
		return 0, 0, false
	}
	lat, ok2 := values.ParseScore(args[1])
	if !ok2 {
		c.Out = append(c.Out, resp.ErrNotFloat...)
		return 0, 0, false
	}
	if lon < geohash.LongMin || lon > geohash.LongMax || lat < geohash.LatMin || lat > geohash.LatMax {
		msg := append([]byte("ERR invalid longitude,latitude pair "), cFloat(lon)...)
		msg = append(append(msg, ','), cFloat(lat)...)
		c.Err(string(msg))
		return 0, 0, false
	}
	return lon, lat, true
}

// cFloat is C's "%f".
func cFloat(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'f', 6, 64)
}

// geoUnit is extractUnitOrReply.
func geoUnit(c *keyspace.Ctx, a []byte) (float64, bool) {
	u, ok := geohash.Unit(a)
	if !ok {
		c.Err(errGeoUnit)
	}
	return u, ok
}

// geoDistance is extractDistanceOrReply: a radius and its unit.
func geoDistance(c *keyspace.Ctx, args [][]byte, s *geohash.Shape) bool {
	r, ok := values.ParseScore(args[0])
	if !ok {
		c.Err("ERR need numeric radius")
		return false
	}
	if r < 0 {
		c.Err(errGeoNegRadius)
		return false
	}
	s.Radius = r
	s.Conversion, ok = geoUnit(c, args[1])
	return ok
}

// geoBox is extractBoxOrReply: width, height and unit.
func geoBox(c *keyspace.Ctx, args [][]byte, s *geohash.Shape) bool {
	w, ok := values.ParseScore(args[0])
	if !ok {
		c.Err("ERR need numeric width")
		return false
	}
	h, ok := values.ParseScore(args[1])
	if !ok {
		c.Err("ERR need numeric height")
		return false
	}
	if h < 0 || w < 0 {
		c.Err("ERR height or width cannot be negative")
		return false
	}
	s.Width, s.Height = w, h
	s.Conversion, ok = geoUnit(c, args[2])
	return ok
}

// geoCoord replies a coordinate as addReplyHumanLongDouble.
func geoCoord(c *keyspace.Ctx, f float64) {
	if c.RESP3 {
		c.Out = append(c.Out, ',')
		c.Out = geohash.AppendCoord(c.Out, f)
		c.Out = append(c.Out, '\r', '\n')
		return
	}
	var buf [64]byte
	c.Bulk(geohash.AppendCoord(buf[:0], f))
}

// geoDist replies a distance as addReplyDoubleDistance ("%.4f", a bulk).
func geoDist(c *keyspace.Ctx, d float64) {
	var buf [64]byte
	c.Bulk(geohash.AppendDistance(buf[:0], d))
}

func cmdGeoAdd(c *keyspace.Ctx) {
	nx, xx := false, false
	i := 2
options:
	for ; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case resp.EqualFold(a, "nx"):
			nx = true
		case resp.EqualFold(a, "xx"):
			xx = true
		case resp.EqualFold(a, "ch"):
		default:
			break options
		}
	}
	if (len(c.Args)-i)%3 != 0 || xx && nx {
		c.SyntaxErr()
		return
	}
	n := (len(c.Args) - i) / 3
	// ZADD key [options] score member ..., as Redis rewrites GEOADD.
	zargs := make([][]byte, 0, i+2*n)
	zargs = append(zargs, []byte("zadd"))
	zargs = append(zargs, c.Args[1:i]...)
	scores := make([]byte, 0, 20*n)
	for j := i; j < len(c.Args); j += 3 {
		lon, lat, ok := geoLongLat(c, c.Args[j:j+2])
		if !ok {
			return
		}
		score, _ := geohash.Score(lon, lat)
		start := len(scores)
		scores = strconv.AppendUint(scores, score, 10)
		zargs = append(zargs, scores[start:len(scores):len(scores)], c.Args[j+2])
	}
	args := c.Args
	c.Args = zargs
	zadd(c, 0)
	c.Args = args
}

// geoScore is a member's score, when the key and the member exist.
func geoScore(o *keyspace.Object, member []byte) (float64, bool) {
	if o == nil {
		return 0, false
	}
	return keyspace.ZSetScore(o, member)
}

func cmdGeoDist(c *keyspace.Ctx) {
	toMeter := 1.0
	switch {
	case len(c.Args) == 5:
		var ok bool
		if toMeter, ok = geoUnit(c, c.Args[4]); !ok {
			return
		}
	case len(c.Args) > 5:
		c.SyntaxErr()
		return
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	s1, ok1 := keyspace.ZSetScore(o, c.Args[2])
	s2, ok2 := keyspace.ZSetScore(o, c.Args[3])
	if !ok1 || !ok2 {
		c.Null()
		return
	}
	lon1, lat1 := geohash.DecodeScore(s1)
	lon2, lat2 := geohash.DecodeScore(s2)
	geoDist(c, geohash.Distance(lon1, lat1, lon2, lat2)/toMeter)
}

func cmdGeoHash(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	c.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		score, ok := geoScore(o, m)
		if !ok {
			c.Null()
			continue
		}
		var buf [11]byte
		c.Bulk(geohash.AppendString(buf[:0], score))
	}
}

func cmdGeoPos(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	c.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		score, ok := geoScore(o, m)
		if !ok {
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
			continue
		}
		lon, lat := geohash.DecodeScore(score)
		c.Array(2)
		geoCoord(c, lon)
		geoCoord(c, lat)
	}
}

// georadiusGeneric's flags.
const (
	geoRadiusCoords = 1 << iota // GEORADIUS: around coordinates
	geoRadiusMember             // GEORADIUSBYMEMBER: around a member
	geoNoStore                  // the _RO variants: no STORE/STOREDIST
	geoSearch                   // GEOSEARCH's arguments
	geoSearchStore              // GEOSEARCHSTORE: STOREDIST without a key
)

func cmdGeoRadius(c *keyspace.Ctx)           { georadius(c, 1, geoRadiusCoords) }
func cmdGeoRadiusByMember(c *keyspace.Ctx)   { georadius(c, 1, geoRadiusMember) }
func cmdGeoRadiusRO(c *keyspace.Ctx)         { georadius(c, 1, geoRadiusCoords|geoNoStore) }
func cmdGeoRadiusByMemberRO(c *keyspace.Ctx) { georadius(c, 1, geoRadiusMember|geoNoStore) }
func cmdGeoSearch(c *keyspace.Ctx)           { georadius(c, 1, geoSearch) }
func cmdGeoSearchStore(c *keyspace.Ctx)      { georadius(c, 2, geoSearch|geoSearchStore) }

// geoPoint is one member found inside the search area; member is
// borrowed from the sorted set.
type geoPoint struct {
	lon, lat, dist, score float64
	member                []byte
}

// georadius is Redis' georadiusGeneric, in its order: the source key, the
// centre, each option, the combinations, then the search.
func georadius(c *keyspace.Ctx, srcIdx int, flags int) {
	var storeKey []byte
	storeDist := false
	o, ok := c.ReadKind(c.DBFor(c.Args[srcIdx]), c.Args[srcIdx], keyspace.KindZSet)
	if !ok {
		return
	}
	var shape geohash.Shape
	base := 0
	switch {
	case flags&geoRadiusCoords != 0:
		base = 6
		if shape.Long, shape.Lat, ok = geoLongLat(c, c.Args[2:4]); !ok {
			return
		}
		if !geoDistance(c, c.Args[base-2:base], &shape) {
			return
		}
	case flags&geoRadiusMember != 0 && o == nil:
		base = 5
	case flags&geoRadiusMember != 0:
		base = 5
		score, ok := keyspace.ZSetScore(o, c.Args[2])
		if !ok {
			c.Err(errGeoMember)
			return
		}
		shape.Long, shape.Lat = geohash.DecodeScore(score)
		if !geoDistance(c, c.Args[base-2:base], &shape) {
			return
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = c.Args[1]
		}
	}

	withDist, withHash, withCoord := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sort := 0 // 0 none, 1 asc, 2 desc
	anyOpt := false
	count := int64(0)
	rest := c.Args[base:]
	for i := 0; i < len(rest); i++ {
		a, left := rest[i], len(rest)-i-1
		search := flags&geoSearch != 0
		switch {
		case resp.EqualFold(a, "withdist"):
			withDist = true
		case resp.EqualFold(a, "withhash"):
			withHash = true
		case resp.EqualFold(a, "withcoord"):
			withCoord = true
		case resp.EqualFold(a, "any"):
			anyOpt = true
		case resp.EqualFold(a, "asc"):
			sort = 1
		case resp.EqualFold(a, "desc"):
			sort = 2
		case resp.EqualFold(a, "count") && left >= 1:
			n, ok := resp.ParseInt(rest[i+1])
			if !ok {
				c.NotInteger()
				return
			}
			if n <= 0 {
				c.Err("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case resp.EqualFold(a, "store") && left >= 1 && flags&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = rest[i+1], false
			i++
		case resp.EqualFold(a, "storedist") && left >= 1 && flags&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = rest[i+1], true
			i++
		case resp.EqualFold(a, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case resp.EqualFold(a, "frommember") && left >= 1 && search && !fromLoc:
			if o != nil {
				score, ok := keyspace.ZSetScore(o, rest[i+1])
				if !ok {
					c.Err(errGeoMember)
					return
				}
				shape.Long, shape.Lat = geohash.DecodeScore(score)
			}
			fromMember = true
			i++
		case resp.EqualFold(a, "fromlonlat") && left >= 2 && search && !fromMember:
			if shape.Long, shape.Lat, ok = geoLongLat(c, rest[i+1:i+3]); !ok {
				return
			}
			fromLoc = true
			i += 2
		case resp.EqualFold(a, "byradius") && left >= 2 && search && !byBox:
			if !geoDistance(c, rest[i+1:i+3], &shape) {
				return
			}
			shape.Box = false
			byRadius = true
			i += 2
		case resp.EqualFold(a, "bybox") && left >= 3 && search && !byRadius:
			if !geoBox(c, rest[i+1:i+4], &shape) {
				return
			}
			shape.Box = true
			byBox = true
			i += 3
		default:
			c.SyntaxErr()
			return
		}
	}

	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.Err("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if flags&geoSearch != 0 && !(fromMember || fromLoc) {
		c.Err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(c.Args[0]))
		return
	}
	if flags&geoSearch != 0 && !(byRadius || byBox) {
		c.Err("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(c.Args[0]))
		return
	}
	if anyOpt && count == 0 {
		c.Err("ERR the ANY argument requires COUNT argument")
		return
	}
	if o == nil {
		if storeKey != nil {
			zstoreNotifyFirst(c, storeKey, nil, "") // deletes it (del), replies 0
			return
		}
		c.Array(0)
		return
	}
	if count != 0 && sort == 0 && !anyOpt {
		sort = 1
	}

	limit := 0
	if anyOpt {
		limit = int(min(count, math.MaxInt32))
	}
	sc := geoScratchPool.Get().(*geoScratch)
	defer sc.release()
	points := sc.collect(o, &shape, limit)
	if len(points) == 0 && storeKey == nil {
		c.Array(0)
		return
	}
	returned := len(points)
	if count != 0 && int64(returned) > count {
		returned = int(count)
	}
	// The points in reply order: the first returned of the collection
	// order, or of the order by distance.
	var order []geoRank
	if sort != 0 {
		order = sc.nearest(returned, sort == 2)
	}
	point := func(i int) *geoPoint {
		if order != nil {
			return &points[order[i].i]
		}
		return &points[i]
	}

	if storeKey != nil {
		// Members are copied: the store may replace the source.
		pairs := make([]zpair, returned)
		var arena []byte
		for i := range pairs {
			arena = append(arena, point(i).member...)
		}
		for i := range pairs {
			p := point(i)
			score := p.score
			if storeDist {
				score = p.dist / shape.Conversion
			}
			pairs[i] = zpair{arena[:len(p.member):len(p.member)], score}
			arena = arena[len(p.member):]
		}
		event := "georadiusstore" // Redis' event names, geo.c
		if flags&geoSearch != 0 {
			event = "geosearchstore"
		}
		zstoreNotifyFirst(c, storeKey, pairs, event)
		return
	}
	opts := 0
	for _, on := range [...]bool{withDist, withCoord, withHash} {
		if on {
			opts++
		}
	}
	c.Array(returned)
	for i := range returned {
		p := point(i)
		if opts > 0 {
			c.Array(opts + 1)
		}
		c.Bulk(p.member)
		if withDist {
			geoDist(c, p.dist/shape.Conversion)
		}
		if withHash {
			c.Int(int64(p.score))
		}
		if withCoord {
			c.Array(2)
			geoCoord(c, p.lon)
			geoCoord(c, p.lat)
		}
	}
}

// geoScratch is one search's working memory, pooled so that a search
// allocates nothing per candidate (nor, once warm, per call): the points
// found, in the collection order, and the ranks that order them by
// distance. Handlers run on whichever goroutine holds the shard, so the
// scratch is a sync.Pool's, not a package variable.
type geoScratch struct {
	points []geoPoint
	ranks  []geoRank
	spans  []geohash.Span
	offs   [128]int // a listpack's pair offsets (keyspace.ZView)
}

// geoRank is a point's place in the order by distance: its distance and
// its index in the collection order. It holds no pointer, so sorting moves
// 16 bytes and no write barrier runs.
type geoRank struct {
	dist float64
	i    int
}

var geoScratchPool = sync.Pool{New: func() any { return new(geoScratch) }}

// geoScratchKeep is the most points a scratch keeps across calls (about
// 3.5 MB); a larger one goes back to the garbage collector.
const geoScratchKeep = 1 << 16

// release returns sc to the pool, dropping its references to members.
func (sc *geoScratch) release() {
	if cap(sc.points) > geoScratchKeep {
		return
	}
	clear(sc.points)
	sc.points, sc.ranks = sc.points[:0], sc.ranks[:0]
	geoScratchPool.Put(sc)
}

// collect is membersOfAllNeighbors: the members of the nine cells' score
// ranges that are inside the shape, cell by cell in Redis' order, stopping
// once limit (ANY) are found. Each cell is, as in Redis, a seek in the
// sorted set and a walk to the end of its score range, here one per span
// of the range that may hold a member inside the shape. The
// members are borrowed from o: valid until o changes.
func (sc *geoScratch) collect(o *keyspace.Object, shape *geohash.Shape, limit int) []geoPoint {
	cells := geohash.CellsFor(shape)
	points := sc.points[:0]
	z := keyspace.ZView(o, sc.offs[:])
	last := 0
	for i, cell := range cells {
		if cell.IsZero() {
			continue
		}
		// Redis skips a cell equal to the previous one processed (huge
		// radii make neighbours coincide); its "previous" starts unset,
		// and index 0 reads as unset, so a repeat of the centre is walked.
		if last != 0 && cell == cells[last] {
			continue
		}
		if len(points) > 0 && limit > 0 && len(points) >= limit {
			break
		}
		// The cell's score range, less the parts whose members all fail
		// the shape's bounds (geohash.AppendSpans): the same members.
		sc.spans = shape.AppendSpans(sc.spans[:0], cell)
	spans:
		for _, sp := range sc.spans {
			r := values.ScoreRange{Min: float64(sp.Min), Max: float64(sp.Max)}
			for z.SeekScore(&r, false); z.Valid(); z.Next() {
				score := z.Score()
				if !(score < r.Max) {
					break
				}
				lon, lat := geohash.DecodeScore(score)
				if dist, in := shape.Within(lon, lat); in {
					points = append(points, geoPoint{lon, lat, dist, score, z.Member()})
				}
				if len(points) > 0 && limit > 0 && len(points) >= limit {
					break spans
				}
			}
		}
		last = i
	}
	sc.points = points
	return points
}

// geoBefore is the order of the reply: by distance (nearest first, or
// farthest with desc), ties in the collection order. Redis sorts every
// point with glibc's qsort, a stable merge sort, when COUNT covers them, so
// ties keep the collection order there too; with the index as the
// tie-break the order is total, and any sort or selection gives that
// result. (With a smaller COUNT Redis' pqsort, a partial quicksort, may
// order ties across the cut otherwise: docs/compatibility.md.)
func geoBefore(a, b geoRank, desc bool) bool {
	if a.dist != b.dist {
		if desc {
			return a.dist > b.dist
		}
		return a.dist < b.dist
	}
	return a.i < b.i
}

// nearest returns the first k of the collected points in geoBefore's
// order. When k is fewer than all (COUNT without ANY; Redis' pqsort), a
// bounded heap of the k best so far (the worst on top) selects them in
// n log k comparisons, and only those k are sorted.
func (sc *geoScratch) nearest(k int, desc bool) []geoRank {
	n := len(sc.points)
	ranks := sc.ranks[:0]
	if k >= n {
		for i := range sc.points {
			ranks = append(ranks, geoRank{sc.points[i].dist, i})
		}
	} else {
		for i := range sc.points {
			r := geoRank{sc.points[i].dist, i}
			if len(ranks) < k {
				ranks = append(ranks, r)
				geoHeapUp(ranks, len(ranks)-1, desc)
				continue
			}
			if geoBefore(r, ranks[0], desc) {
				ranks[0] = r
				geoHeapDown(ranks, desc)
			}
		}
	}
	slices.SortFunc(ranks, func(a, b geoRank) int {
		switch {
		case geoBefore(a, b, desc):
			return -1
		case geoBefore(b, a, desc):
			return 1
		}
		return 0
	})
	sc.ranks = ranks
	return ranks
}

// geoHeapUp and geoHeapDown keep h a heap whose top is the last in
// geoBefore's order.
func geoHeapUp(h []geoRank, j int, desc bool) {
	for j > 0 {
		parent := (j - 1) / 2
		if !geoBefore(h[parent], h[j], desc) {
			return
		}
		h[parent], h[j] = h[j], h[parent]
		j = parent
	}
}

func geoHeapDown(h []geoRank, desc bool) {
	j := 0
	for {
		worst, l := j, 2*j+1
		if l < len(h) && geoBefore(h[worst], h[l], desc) {
			worst = l
		}
		if r := l + 1; r < len(h) && geoBefore(h[worst], h[r], desc) {
			worst = r
		}
		if worst == j {
			return
		}
		h[j], h[worst] = h[worst], h[j]
		j = worst
	}
}
