package geohash

import (
	"math"
	"strconv"
)

// Redis' limits (geohash.h, geohash_helper.c).
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	StepMax = 26 // bits per coordinate of a stored hash

	EarthRadius = 6372797.560856 // metres
	mercatorMax = 20037726.37
	dR          = math.Pi / 180.0
)

// Range is a coordinate interval.
type Range struct{ Min, Max float64 }

// Area is a cell: its longitude and latitude intervals.
type Area struct{ Long, Lat Range }

// Bits is a geohash of Step bits per coordinate (interleaved: latitude in
// the even bits, longitude in the odd ones).
type Bits struct {
	Bits uint64
	Step uint8
}

// IsZero reports a cleared cell (Redis' HASHISZERO: an excluded neighbour).
func (b Bits) IsZero() bool { return b.Bits == 0 && b.Step == 0 }

var (
	wgsLong = Range{LongMin, LongMax}
	wgsLat  = Range{LatMin, LatMax}
)

// interleave64 spreads xlo into the even bits and ylo into the odd ones.
func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | x<<s[i]) & b[i]
		y = (y | y<<s[i]) & b[i]
	}
	return x | y<<1
}

// deinterleave64 is interleave64's inverse: even bits low, odd bits high.
// Redis' loop of masks and shifts, unrolled (DecodeScore runs it for every
// member of the cells a search walks).
func deinterleave64(v uint64) uint64 {
	x, y := v, v>>1
	x &= 0x5555555555555555
	y &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	y = (y | y>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	y = (y | y>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	y = (y | y>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	y = (y | y>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	y = (y | y>>16) & 0x00000000FFFFFFFF
	return x | y<<32
}

// encode is geohashEncode: ok is false outside the WGS84 limits or the
// given ranges.
func encode(long, lat Range, longitude, latitude float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 {
		return Bits{}, false
	}
	if longitude > LongMax || longitude < LongMin || latitude > LatMax || latitude < LatMin {
		return Bits{}, false
	}
	if latitude < lat.Min || latitude > lat.Max || longitude < long.Min || longitude > long.Max {
		return Bits{}, false
	}
	latOff := (latitude - lat.Min) / (lat.Max - lat.Min)
	longOff := (longitude - long.Min) / (long.Max - long.Min)
	latOff *= float64(uint64(1) << step)
	longOff *= float64(uint64(1) << step)
	return Bits{interleave64(uint32(latOff), uint32(longOff)), step}, true
}

// Encode is geohashEncodeWGS84 at step.
func Encode(longitude, latitude float64, step uint8) (Bits, bool) {
	return encode(wgsLong, wgsLat, longitude, latitude, step)
}

// decode is geohashDecode.
func decode(long, lat Range, h Bits) Area {
	sep := deinterleave64(h.Bits)
	latScale, longScale := lat.Max-lat.Min, long.Max-long.Min
	ilat, ilon := uint32(sep), uint32(sep>>32) // +1 wraps in uint32, as in C
	div := float64(uint64(1) << h.Step)
	return Area{
		Lat:  Range{lat.Min + (float64(ilat)*1.0/div)*latScale, lat.Min + (float64(ilat+1)*1.0/div)*latScale},
		Long: Range{long.Min + (float64(ilon)*1.0/div)*longScale, long.Min + (float64(ilon+1)*1.0/div)*longScale},
	}
}

// Decode is geohashDecodeToLongLatWGS84: the centre of h's cell, clamped
// to the limits.
func Decode(h Bits) (longitude, latitude float64) {
	a := decode(wgsLong, wgsLat, h)
	longitude = (a.Long.Min + a.Long.Max) / 2
	longitude = min(max(longitude, LongMin), LongMax)
	latitude = (a.Lat.Min + a.Lat.Max) / 2
	latitude = min(max(latitude, LatMin), LatMax)
	return longitude, latitude
}

// ScoreBits is what C's (uint64_t) cast makes of a sorted set score on
// x86-64: a truncating conversion through int64 below 2^63.
func ScoreBits(score float64) uint64 {
	if score < 9223372036854775808.0 {
		if score != score || score <= -9223372036854775808.0 {
			return 1 << 63 // cvttsd2si's "integer indefinite"
		}
		return uint64(int64(score))
	}
	return uint64(int64(score-9223372036854775808.0)) ^ 1<<63
}

// DecodeScore is geo.c's decodeGeohash: the position a member's score
// stands for.
func DecodeScore(score float64) (longitude, latitude float64) {
	return Decode(Bits{ScoreBits(score), StepMax})
}

// Align52 is geohashAlign52Bits: the hash shifted to 52 bits.
func Align52(h Bits) uint64 { return h.Bits << (52 - uint(h.Step)*2) }

// Score is the sorted set score GEOADD stores for a position; ok is false
// outside the limits.
func Score(longitude, latitude float64) (uint64, bool) {
	h, ok := Encode(longitude, latitude, StepMax)
	if !ok {
		return 0, false
	}
	return Align52(h), true
}

const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// AppendString appends GEOHASH's 11 characters for a member's score: the
// position re-encoded over the standard latitude range [-90, 90], five
// bits a character, the last one '0' (52 bits make ten and a half).
func AppendString(dst []byte, score float64) []byte {
	lon, lat := DecodeScore(score)
	h, _ := encode(Range{-180, 180}, Range{-90, 90}, lon, lat, 26)
	for i := 0; i < 11; i++ {
		idx := 0
		if i < 10 {
			idx = int(h.Bits>>(52-uint(i+1)*5)) & 0x1f
		}
		dst = append(dst, alphabet[idx])
	}
	return dst
}

// Neighbors are the eight cells around one.
type Neighbors struct {
	North, East, West, South, NorthEast, SouthEast, NorthWest, SouthWest Bits
}

func moveX(h *Bits, d int) {
	if d == 0 {
		return
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

func moveY(h *Bits, d int) {
	if d == 0 {
		return
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

// neighbors is geohashNeighbors.
func neighbors(h Bits) Neighbors {
	n := Neighbors{h, h, h, h, h, h, h, h}
	moveX(&n.East, 1)
	moveX(&n.West, -1)
	moveY(&n.South, -1)
	moveY(&n.North, 1)
	moveX(&n.NorthWest, -1)
	moveY(&n.NorthWest, 1)
	moveX(&n.SouthWest, -1)
	moveY(&n.SouthWest, -1)
	moveX(&n.NorthEast, 1)
	moveY(&n.NorthEast, 1)
	moveX(&n.SouthEast, 1)
	moveY(&n.SouthEast, -1)
	return n
}

func degRad(a float64) float64 { return a * dR }
func radDeg(a float64) float64 { return a / dR }

// Distance is geohashGetDistance (7.0): the haversine distance in metres.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	return distanceFrom(lon1, lat1, math.Cos(degRad(lat1)), lon2, lat2)
}

// distanceFrom is Distance with cos(lat1) given: a search computes it once
// for its centre. The arithmetic is Distance's, in the same order.
func distanceFrom(lon1, lat1, cosLat1, lon2, lat2 float64) float64 {
	lat1r, lon1r := degRad(lat1), degRad(lon1)
	lat2r, lon2r := degRad(lat2), degRad(lon2)
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	return 2.0 * EarthRadius * math.Asin(math.Sqrt(u*u+cosLat1*math.Cos(lat2r)*v*v))
}

// estimateSteps is geohashEstimateStepsByRadius.
func estimateSteps(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	step = min(max(step, 1), 26)
	return uint8(step)
}

// Shape is a search area: a circle (Radius) or a box (Width × Height),
// centred on (Long, Lat), in units of Conversion metres.
type Shape struct {
	Long, Lat     float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conversion    float64 // metres per unit

	// Bounds that reject most members without trigonometry (prefilter,
	// set by CellsFor): the latitude reach in metres, and the longitude
	// difference in degrees past which a member is out (+Inf: none).
	prepared         bool
	latReach, lonMax float64
	cosLat           float64 // cos(Lat), for distanceFrom
}

// prefilterMargin widens the prefilter's bounds far beyond the rounding of
// the exact computation (about 1e-16 relative), so that every member the
// prefilter rejects is one Redis' computation rejects too.
const prefilterMargin = 1e-9

// prepare computes the prefilter's bounds. A member passing the latitude
// test lies within latReach/EarthRadius radians of the centre's latitude,
// so cos(its latitude) >= cmin; the distance Redis compares with the
// longitude reach (the full haversine for a circle, the distance along the
// member's parallel for a box) is then at least
// 2R*asin(k*|sin(dlon/2)|), k = sqrt(cos(lat0)*cmin) or cmin, which
// exceeds the reach once |dlon| > 2*asin(sin(reach/2R)/k).
func (s *Shape) prepare() {
	s.prepared = true
	s.cosLat = math.Cos(degRad(s.Lat))
	s.latReach = s.Radius * s.Conversion
	lonReach := s.latReach
	if s.Box {
		s.latReach = s.Height * s.Conversion / 2
		lonReach = s.Width * s.Conversion / 2
	}
	s.latReach = s.latReach*(1+prefilterMargin) + prefilterMargin
	lonReach = lonReach*(1+prefilterMargin) + prefilterMargin
	s.lonMax = math.Inf(1)
	band := math.Abs(degRad(s.Lat)) + s.latReach/EarthRadius
	if band >= math.Pi/2 || lonReach/(2*EarthRadius) >= math.Pi/2 {
		return
	}
	cmin := math.Cos(band)
	k := cmin
	if !s.Box {
		k = math.Sqrt(math.Cos(degRad(s.Lat)) * cmin)
	}
	x := math.Sin(lonReach/(2*EarthRadius)) / k
	if !(x < 1) || k <= 0 {
		return
	}
	s.lonMax = radDeg(2*math.Asin(x)) * (1 + prefilterMargin)
}

// boundingBox is geohashBoundingBox: min long, min lat, max long, max lat.
func (s *Shape) boundingBox() (minLon, minLat, maxLon, maxLat float64) {
	height, width := s.Conversion*s.Radius, s.Conversion*s.Radius
	if s.Box {
		height, width = s.Conversion*(s.Height/2), s.Conversion*(s.Width/2)
	}
	latDelta := radDeg(height / EarthRadius)
	longDeltaTop := radDeg(width / EarthRadius / math.Cos(degRad(s.Lat+latDelta)))
	longDeltaBottom := radDeg(width / EarthRadius / math.Cos(degRad(s.Lat-latDelta)))
	if s.Lat < 0 {
		minLon, maxLon = s.Long-longDeltaBottom, s.Long+longDeltaBottom
	} else {
		minLon, maxLon = s.Long-longDeltaTop, s.Long+longDeltaTop
	}
	return minLon, s.Lat - latDelta, maxLon, s.Lat + latDelta
}

// Cells are the nine cells that cover a search, in the order Redis walks
// them (centre, N, S, E, W, NE, NW, SE, SW); excluded ones are zero.
type Cells [9]Bits

// CellsFor is geohashCalculateAreasByShapeWGS84.
func CellsFor(s *Shape) Cells {
	s.prepare()
	minLon, minLat, maxLon, maxLat := s.boundingBox()
	radius := s.Radius
	if s.Box {
		radius = math.Sqrt((s.Width/2)*(s.Width/2) + (s.Height/2)*(s.Height/2))
	}
	radius *= s.Conversion
	steps := estimateSteps(radius, s.Lat)
	hash, _ := encode(wgsLong, wgsLat, s.Long, s.Lat, steps)
	nb := neighbors(hash)
	area := decode(wgsLong, wgsLat, hash)

	decrease := false
	{
		north, south := decode(wgsLong, wgsLat, nb.North), decode(wgsLong, wgsLat, nb.South)
		east, west := decode(wgsLong, wgsLat, nb.East), decode(wgsLong, wgsLat, nb.West)
		if north.Lat.Max < maxLat || south.Lat.Min > minLat || east.Long.Max < maxLon || west.Long.Min > minLon {
			decrease = true
		}
	}
	if steps > 1 && decrease {
		steps--
		hash, _ = encode(wgsLong, wgsLat, s.Long, s.Lat, steps)
		nb = neighbors(hash)
		area = decode(wgsLong, wgsLat, hash)
	}
	if steps >= 2 {
		if area.Lat.Min < minLat {
			nb.South, nb.SouthWest, nb.SouthEast = Bits{}, Bits{}, Bits{}
		}
		if area.Lat.Max > maxLat {
			nb.North, nb.NorthEast, nb.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Long.Min < minLon {
			nb.West, nb.SouthWest, nb.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Long.Max > maxLon {
			nb.East, nb.SouthEast, nb.NorthEast = Bits{}, Bits{}, Bits{}
		}
	}
	return Cells{hash, nb.North, nb.South, nb.East, nb.West, nb.NorthEast, nb.NorthWest, nb.SouthEast, nb.SouthWest}
}

// ScoreRange is scoresOfGeoHashBox: the scores [min, max) of the members
// inside cell h.
func ScoreRange(h Bits) (min, max uint64) {
	min = Align52(h)
	h.Bits++
	return min, Align52(h)
}

// Span is a range [Min, Max) of sorted set scores: the members of one
// cell, or of consecutive ones.
type Span struct{ Min, Max uint64 }

// spanDepth is how many times AppendSpans quarters a search cell: 4^3 = 64
// parts at most, each 1/8 of the cell's width and height.
const spanDepth = 3

// AppendSpans appends to dst, in increasing order, the score ranges of
// cell h that may hold a member inside s: h quartered spanDepth times
// (a geohash cell's four children are the four quarters of its score
// range, in order), without the parts whose every point fails Within's
// bounds, adjacent parts merged. Every member of h outside the spans is one
// Within rejects (and so Redis), so walking the spans instead of h's whole
// range finds the same members in the same order, without decoding the
// others: a search's nine cells are up to twice as wide as the shape and
// the set may be much larger than the part the shape covers.
func (s *Shape) AppendSpans(dst []Span, h Bits) []Span {
	if !s.prepared {
		s.prepare()
	}
	return s.appendSpans(dst, h, spanDepth)
}

func (s *Shape) appendSpans(dst []Span, h Bits, depth int) []Span {
	if s.outside(decode(wgsLong, wgsLat, h)) {
		return dst
	}
	if depth == 0 || h.Step >= StepMax {
		lo, hi := ScoreRange(h)
		if n := len(dst); n > 0 && dst[n-1].Max == lo {
			dst[n-1].Max = hi
			return dst
		}
		return append(dst, Span{lo, hi})
	}
	for q := uint64(0); q < 4; q++ {
		dst = s.appendSpans(dst, Bits{h.Bits<<2 | q, h.Step + 1}, depth-1)
	}
	return dst
}

// outsideMargin widens a cell by this many degrees (about 0.1 mm) before
// outside tests it, and its verdicts are compared with the bounds plus as
// much: far more than the rounding of a decoded position (1e-13 degrees)
// or of the tests' arithmetic, so outside rejects a cell only when Within
// would reject every member decoded in it.
const outsideMargin = 1e-9

// outside reports whether every point of a (widened by outsideMargin)
// fails one of Within's bounds: the latitude reach, or the longitude
// difference lonMax. The nearest point of an interval is an end, or the
// centre's own coordinate when the interval holds it (the circular
// longitude difference rises then falls away from the centre, so on an
// interval to one side of it the least is at an end).
func (s *Shape) outside(a Area) bool {
	latLo, latHi := a.Lat.Min-outsideMargin, a.Lat.Max+outsideMargin
	if s.Lat < latLo || s.Lat > latHi {
		end := latLo
		if s.Lat > latHi {
			end = latHi
		}
		if EarthRadius*math.Abs(degRad(end)-degRad(s.Lat)) > s.latReach*(1+outsideMargin)+outsideMargin {
			return true
		}
	}
	if math.IsInf(s.lonMax, 1) {
		return false
	}
	lonLo, lonHi := a.Long.Min-outsideMargin, a.Long.Max+outsideMargin
	if lonLo <= s.Long && s.Long <= lonHi {
		return false
	}
	dlo, dhi := math.Abs(lonLo-s.Long), math.Abs(lonHi-s.Long)
	return min(dlo, 360-dlo, dhi, 360-dhi) > s.lonMax+outsideMargin
}

// Within is geoAppendIfWithinShape's test: whether the member at (lon,
// lat) is inside s, and its distance from the centre in metres.
//
// A member whose latitude alone puts it farther away than the shape reaches
// is out whatever its longitude (the haversine distance is at least
// EarthRadius times the latitude difference in radians), and so is one
// whose longitude difference exceeds lonMax (see prepare): the
// trigonometry is skipped for most members of the nine cells. The margins
// leave every member near the edge to the exact computation, so the
// verdict stays Redis'.
func (s *Shape) Within(lon, lat float64) (dist float64, ok bool) {
	if !s.prepared {
		s.prepare()
	}
	if EarthRadius*math.Abs(degRad(lat)-degRad(s.Lat)) > s.latReach {
		return 0, false
	}
	if dlon := math.Abs(lon - s.Long); min(dlon, 360-dlon) > s.lonMax {
		return 0, false
	}
	return s.exact(lon, lat)
}

// exact is Redis' test itself (geohashGetDistanceIfInRadiusWGS84 or
// geohashGetDistanceIfInRectangle).
func (s *Shape) exact(lon, lat float64) (dist float64, ok bool) {
	if !s.prepared {
		s.prepare()
	}
	if !s.Box {
		d := distanceFrom(s.Long, s.Lat, s.cosLat, lon, lat)
		return d, !(d > s.Radius*s.Conversion)
	}
	// Redis 7.0's geohashGetDistanceIfInRectangle.
	lonDist := Distance(lon, lat, s.Long, lat)
	latDist := Distance(lon, lat, lon, s.Lat)
	if lonDist > s.Width*s.Conversion/2 || latDist > s.Height*s.Conversion/2 {
		return 0, false
	}
	return distanceFrom(s.Long, s.Lat, s.cosLat, lon, lat), true
}

// Unit is extractUnitOrReply's table: metres per unit, ok false for an
// unknown unit.
func Unit(u []byte) (float64, bool) {
	switch {
	case equalFold(u, "m"):
		return 1, true
	case equalFold(u, "km"):
		return 1000, true
	case equalFold(u, "ft"):
		return 0.3048, true
	case equalFold(u, "mi"):
		return 1609.34, true
	}
	return 0, false
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// AppendDistance appends a distance as Redis prints it ("%.4f").
func AppendDistance(dst []byte, d float64) []byte {
	return strconv.AppendFloat(dst, d, 'f', 4, 64)
}

// AppendCoord appends a coordinate as Redis' ld2string LD_STR_HUMAN:
// "%.17Lf" with the trailing zeros (and a bare dot) removed, "-0" as "0".
func AppendCoord(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) {
		if f > 0 {
			return append(dst, "inf"...)
		}
		return append(dst, "-inf"...)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', 17, 64)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[n:]) == "-0" {
		dst = append(dst[:n], '0')
	}
	return dst
}
