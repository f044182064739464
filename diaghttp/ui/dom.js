// DOM and formatting helpers. Every string from the server reaches the page
// through a text node or textContent: nothing here parses HTML, and h()
// refuses the properties that would (the inner and outer HTML setters).

const htmlProps = /html|^style$|^srcdoc$/i;

// h builds an element. props are set as properties when the element has
// one (className, type, disabled ...), otherwise as attributes; "on<event>"
// adds a listener. children may be strings or numbers (text nodes), nodes,
// arrays of those, or null/false (skipped).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (htmlProps.test(k)) throw new Error('h: property ' + k + ' is not allowed');
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k in el && typeof el[k] !== 'function') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

// replace replaces an element's children (null and false are skipped; the
// DOM's own replaceChildren would show them as "null" text).
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// setText replaces an element's content with plain text.
export function setText(el, s) {
  el.textContent = s == null ? '' : String(s);
}

// panel is a titled box; extra goes to the right of the title.
export function panel(title, body, extra) {
  return h('section', { class: 'panel' },
    h('header', { class: 'panel-head' }, h('h2', null, title), extra || null),
    body);
}

// kv renders a definition list of [label, value] pairs; values may be nodes.
export function kv(pairs) {
  const dl = h('dl', { class: 'kv' });
  for (const [k, v] of pairs) append(dl, [h('dt', null, k), h('dd', null, v == null || v === '' ? '—' : v)]);
  return dl;
}

export function badge(text, tone) {
  return h('span', { class: 'badge' + (tone ? ' ' + tone : '') }, text);
}

// toneOf maps the server's status words to a colour class.
export function toneOf(word) {
  switch (String(word).toLowerCase()) {
    case 'ok': case 'online': case 'healthy': case 'ready': case 'master': return 'ok';
    case 'warm': case 'degraded': case 'starting': case 'draining': case 'warning': case 'late': return 'warn';
    case 'hot': case 'unhealthy': case 'critical': case 'shutting_down': case 'shutting down': case 'offline': return 'crit';
    default: return '';
  }
}

// bar is a horizontal share bar (0..100) with its value as text. The width
// is set through the CSSOM, which the Content-Security-Policy allows (it
// forbids style attributes, not style properties).
export function bar(pct, label, tone) {
  const fill = h('span', { class: 'bar-fill' + (tone ? ' ' + tone : '') });
  fill.style.width = Math.max(0, Math.min(100, pct)).toFixed(1) + '%';
  return h('span', { class: 'bar' }, h('span', { class: 'bar-track' }, fill), h('span', { class: 'bar-text num' }, label));
}

// DataTable is a table with sortable columns. columns: {key, label, num,
// value(row) for sorting, cell(row) -> string|Node, title, wrap}. Cells do
// not wrap unless the table's or the column's wrap is set: a wide table
// scrolls inside its box.
export class DataTable {
  constructor(columns, { empty = 'Nothing to show.', sortKey = null, sortDesc = false, rowKey = null, caption = null, wrap = false } = {}) {
    this.columns = columns;
    this.empty = empty;
    this.sortKey = sortKey;
    this.sortDesc = sortDesc;
    this.rowKey = rowKey;
    this.rows = [];
    this.tbody = h('tbody');
    this.heads = columns.map((c) => {
      const btn = h('button', { type: 'button', class: 'sort', onclick: () => this.sortBy(c.key) }, c.label);
      if (c.title) btn.title = c.title;
      return h('th', { scope: 'col', class: c.num ? 'num' : null }, c.sortable === false ? c.label : btn);
    });
    this.el = h('div', { class: 'table-wrap' },
      h('table', { class: wrap ? 'data' : 'data nowrap' }, caption ? h('caption', { class: 'sr-only' }, caption) : null,
        h('thead', null, h('tr', null, this.heads)), this.tbody));
    this.markSort();
  }

  sortBy(key) {
    if (this.sortKey === key) this.sortDesc = !this.sortDesc;
    else { this.sortKey = key; this.sortDesc = !!this.columns.find((c) => c.key === key)?.num; }
    this.markSort();
    this.render();
  }

  markSort() {
    this.columns.forEach((c, i) => {
      const th = this.heads[i];
      if (c.key === this.sortKey) th.setAttribute('aria-sort', this.sortDesc ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    });
  }

  setRows(rows) {
    this.rows = rows;
    this.render();
  }

  render() {
    let rows = this.rows;
    const col = this.columns.find((c) => c.key === this.sortKey);
    if (col) {
      const val = col.value || ((r) => r[col.key]);
      rows = [...rows].sort((a, b) => {
        const x = val(a), y = val(b);
        const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x ?? '').localeCompare(String(y ?? ''));
        return this.sortDesc ? -d : d;
      });
    }
    if (rows.length === 0) {
      this.tbody.replaceChildren(h('tr', { class: 'empty' }, h('td', { colSpan: this.columns.length }, this.empty)));
      return;
    }
    this.tbody.replaceChildren(...rows.map((r) => {
      const tr = h('tr', null, this.columns.map((c) => {
        const v = c.cell ? c.cell(r) : r[c.key];
        const cls = [c.num ? 'num' : c.mono ? 'mono' : '', c.wrap ? 'wrap' : ''].filter(Boolean).join(' ');
        return h('td', { class: cls || null }, v == null || v === '' ? '—' : v);
      }));
      if (this.rowKey) tr.dataset.key = String(this.rowKey(r));
      return tr;
    }));
  }
}

// ---- formatting -------------------------------------------------------------

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const dec1 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const dec2 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

export const fmtInt = (n) => (n == null || Number.isNaN(n) ? '—' : intFmt.format(n));

export function fmtNum(n) {
  if (n == null || Number.isNaN(n)) return '—';
  const a = Math.abs(n);
  if (a >= 1e9) return dec2.format(n / 1e9) + ' G';
  if (a >= 1e6) return dec2.format(n / 1e6) + ' M';
  if (a >= 1e4) return dec1.format(n / 1e3) + ' k';
  return a >= 100 ? intFmt.format(n) : dec2.format(n);
}

export function fmtRate(n) {
  return n == null ? '—' : fmtNum(n) + '/s';
}

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function fmtBytes(n) {
  if (n == null || Number.isNaN(n)) return '—';
  let i = 0;
  let v = Math.abs(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (n < 0 ? '-' : '') + (i === 0 ? intFmt.format(v) : dec1.format(v)) + ' ' + units[i];
}

export const fmtByteRate = (n) => (n == null ? '—' : fmtBytes(n) + '/s');

// fmtUS formats a duration in microseconds.
export function fmtUS(us) {
  if (us == null || Number.isNaN(us)) return '—';
  if (us < 1000) return dec1.format(us) + ' µs';
  if (us < 1e6) return dec2.format(us / 1000) + ' ms';
  return dec2.format(us / 1e6) + ' s';
}

// fmtAge formats whole seconds as "3d 4h", "5m 12s" ...
export function fmtAge(s) {
  if (s == null || Number.isNaN(s)) return '—';
  s = Math.max(0, Math.floor(s));
  const d = Math.floor(s / 86400), hh = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), ss = s % 60;
  if (d) return d + 'd ' + hh + 'h';
  if (hh) return hh + 'h ' + m + 'm';
  if (m) return m + 'm ' + ss + 's';
  return ss + 's';
}

const pad = (n) => String(n).padStart(2, '0');

// fmtTime shows a unix time (seconds) as local "yyyy-mm-dd hh:mm:ss".
export function fmtTime(unix) {
  if (!unix) return '—';
  const d = new Date(unix * 1000);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + fmtClock(d);
}

export const fmtClock = (d) => pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());

export const fmtPct = (p) => (p == null || Number.isNaN(p) ? '—' : dec1.format(p) + '%');

// timeCell shows a {unix, iso} time with the ISO form (UTC) as a tooltip.
export function timeCell(t) {
  if (!t || !t.unix) return '—';
  return h('time', { dateTime: t.iso, title: t.iso }, fmtTime(t.unix));
}
