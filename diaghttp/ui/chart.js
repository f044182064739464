// Time-series charts on uPlot (vendor/uplot, see its VERSION file). A
// TimeChart keeps the last windowSecs of samples in memory; the page has no
// other history, so a chart starts empty and shows a gap while its view was
// not polling.

import uPlot from './vendor/uplot/uPlot.esm.js';
import { h } from './dom.js';

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

const last = (a) => (a && a.length ? a[a.length - 1] : null);
const clock = (t) => (t == null ? '—' : hhmm(t, true));
const pad = (n) => String(n).padStart(2, '0');

// hhmm is a local time of day, 24-hour, with seconds when asked.
function hhmm(t, secs) {
  const d = new Date(t * 1000);
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + (secs ? ':' + pad(d.getSeconds()) : '');
}

// byteIncrs are tick steps for byte values: 1, 2, 4 ... 512 times each power
// of 1024, so the axis reads 256 KiB, 512 KiB, 768 KiB, 1 MiB.
export const byteIncrs = [0, 1, 2, 3, 4].flatMap((k) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((m) => m * 1024 ** k));

export class TimeChart {
  // series: [{label, color: CSS variable name}]; fmt formats a y value;
  // incrs, when set, are the y axis' tick steps.
  constructor({ title, series, fmt, incrs = null, windowSecs = 300, height = 170 }) {
    this.incrs = incrs;
    this.series = series;
    this.fmt = fmt;
    this.windowSecs = windowSecs;
    this.height = height;
    this.data = [[], ...series.map(() => [])];
    this.lastT = 0;
    this.plotEl = h('div', { class: 'chart-plot' });
    this.el = h('figure', { class: 'chart', dataset: { points: '0' } },
      h('figcaption', null, title, h('span', { class: 'chart-window' }, 'last ' + Math.round(windowSecs / 60) + ' min')),
      this.plotEl);
    this.u = null;
    new ResizeObserver(() => this.resize()).observe(this.plotEl);
  }

  options(width) {
    const axis = cssVar('--chart-axis', '#5b6675');
    const grid = cssVar('--chart-grid', '#e6e9ee');
    const fmt = this.fmt;
    return {
      width,
      height: this.height,
      padding: [10, 12, 0, 0],
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      legend: { show: true, live: true },
      scales: {
        // A fixed window ending at the newest sample: the axis reads the
        // same whatever the history, and new samples enter on the right.
        x: { time: true, range: (u, min, max) => { const end = max ?? Date.now() / 1000; return [end - this.windowSecs, end]; } },
        y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        {
          stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font: '11px system-ui, sans-serif',
          space: 80,
          values: (u, splits, ax, space, incr) => splits.map((v) => hhmm(v, incr < 60)),
        },
        {
          stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { show: false },
          font: '11px system-ui, sans-serif', size: 64,
          ...(this.incrs ? { incrs: this.incrs } : {}),
          values: (u, vals) => vals.map((v) => fmt(v)),
        },
      ],
      series: [
        { value: (u, v, si, idx) => clock(idx == null ? last(u.data[0]) : v) },
        ...this.series.map((s) => {
          const c = cssVar(s.color, '#1f5fbf');
          return {
            label: s.label,
            stroke: c,
            width: 1.5,
            fill: c + '1f',
            points: { show: false },
            // Without the cursor on the plot, the legend shows the newest value.
            value: (u, v, si, idx) => {
              const x = idx == null ? last(u.data[si]) : v;
              return x == null ? '—' : fmt(x);
            },
          };
        }),
      ],
    };
  }

  resize() {
    const w = Math.floor(this.plotEl.clientWidth);
    if (w <= 0) return; // hidden
    if (!this.u) {
      this.u = new uPlot(this.options(w), this.data, this.plotEl);
    } else if (Math.abs(this.u.width - w) > 1) {
      this.u.setSize({ width: w, height: this.height });
    }
  }

  // push adds one sample at unix time t (seconds, fractional). A pause
  // longer than maxGap seconds since the previous sample is drawn as a gap.
  push(t, values, maxGap = 5) {
    if (t <= this.lastT) return;
    const d = this.data;
    if (this.lastT && t - this.lastT > maxGap) {
      d[0].push(this.lastT + 0.001);
      for (let i = 1; i < d.length; i++) d[i].push(null);
    }
    d[0].push(t);
    values.forEach((v, i) => d[i + 1].push(v));
    this.lastT = t;
    const cut = t - this.windowSecs;
    let n = 0;
    while (n < d[0].length && d[0][n] < cut) n++;
    if (n) d.forEach((a) => a.splice(0, n));
    this.el.dataset.points = String(d[0].length);
    this.resize();
    if (this.u) {
      this.u.setData(d);
      if (this.u.cursor.left == null || this.u.cursor.left < 0) this.u.setLegend({ idx: null });
    }
  }
}
