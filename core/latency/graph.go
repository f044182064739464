package latency

import (
	"fmt"
	"strconv"
	"strings"
)

// graphCols is LATENCY_GRAPH_COLS.
const graphCols = 80

// Graph returns LATENCY GRAPH's ASCII art for event (Redis'
// latencyCommandGenSparkeline over src/sparkline.c), and false when the
// event has no samples. The name is matched exactly.
func (m *Monitor) Graph(event string) (string, bool) {
	m.mu.Lock()
	ts := m.events[event]
	if ts == nil {
		m.mu.Unlock()
		return "", false
	}
	hist := ts.history()
	allTime := ts.max
	m.mu.Unlock()

	now := m.now().Unix()
	var seq sequence
	var lo, hi int64
	for i, s := range hist {
		if i == 0 {
			lo, hi = s.Millis, s.Millis
		} else {
			lo, hi = min(lo, s.Millis), max(hi, s.Millis)
		}
		// The label is how long ago the sample was taken.
		var label string
		switch elapsed := now - s.Time.Unix(); {
		case elapsed < 60:
			label = strconv.FormatInt(elapsed, 10) + "s"
		case elapsed < 3600:
			label = strconv.FormatInt(elapsed/60, 10) + "m"
		case elapsed < 3600*24:
			label = strconv.FormatInt(elapsed/3600, 10) + "h"
		default:
			label = strconv.FormatInt(elapsed/(3600*24), 10) + "d"
		}
		seq.add(float64(s.Millis), label)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, allTime)
	b.WriteString(strings.Repeat("-", graphCols))
	b.WriteByte('\n')
	seq.render(&b, graphCols, 4, true)
	return b.String(), true
}

// The sparkline renderer, ported from Redis' src/sparkline.c (itself from
// antirez/aspark). Several rows of characters give a finer vertical
// resolution; labels are written vertically under their column.
const (
	charset        = "_-`"
	charsetFill    = "_o#"
	labelMarginTop = 1
)

type sparkSample struct {
	value float64
	label string
}

type sequence struct {
	samples  []sparkSample
	labels   int
	min, max float64
}

func (seq *sequence) add(value float64, label string) {
	if len(seq.samples) == 0 {
		seq.min, seq.max = value, value
	} else if value < seq.min {
		seq.min = value
	} else if value > seq.max {
		seq.max = value
	}
	seq.samples = append(seq.samples, sparkSample{value, label})
	if label != "" {
		seq.labels++
	}
}

// render is sparklineRender: the sequence in blocks of at most columns
// samples, separated by an empty line.
func (seq *sequence) render(b *strings.Builder, columns, rows int, fill bool) {
	for j := 0; j < len(seq.samples); j += columns {
		sublen := min(len(seq.samples)-j, columns)
		if j != 0 {
			b.WriteByte('\n')
		}
		seq.renderRange(b, rows, j, sublen, fill)
	}
}

// renderRange is sparklineRenderRange (without the log-scale option, which
// LATENCY GRAPH does not use).
func (seq *sequence) renderRange(b *strings.Builder, rows, offset, length int, fill bool) {
	relmax := seq.max - seq.min
	steps := len(charset) * rows
	if relmax == 0 {
		relmax = 1
	}
	chars := make([]byte, length)
	for row, loop := 0, true; loop; {
		loop = false
		for j := range chars {
			chars[j] = ' '
		}
		for j := range length {
			s := seq.samples[j+offset]
			relval := s.value - seq.min
			// C: step = (int) (relval*steps)/relmax; the cast binds first.
			step := int(float64(int(relval*float64(steps))) / relmax)
			step = min(max(step, 0), steps-1)
			if row < rows {
				// The character that draws this row of the sparkline.
				charidx := step - (rows-row-1)*len(charset)
				loop = true
				if charidx >= 0 && charidx < len(charset) {
					if fill {
						chars[j] = charsetFill[charidx]
					} else {
						chars[j] = charset[charidx]
					}
				} else if fill && charidx >= len(charset) {
					chars[j] = '|'
				}
			} else {
				// An empty line between the graph and the labels.
				if seq.labels > 0 && row-rows < labelMarginTop {
					loop = true
					break
				}
				if s.label != "" {
					if labelChar := row - rows - labelMarginTop; len(s.label) > labelChar {
						loop = true
						chars[j] = s.label[labelChar]
					}
				}
			}
		}
		if loop {
			row++
			b.Write(chars)
			b.WriteByte('\n')
		}
	}
}
