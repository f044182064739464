// Performance: per-command latency percentiles, the slow log, the slowest
// Lua scripts and functions, latency monitor events and the hot-shard
// analysis of the status document.

import { getJSON } from '../api.js';
import {
  h, replace, setText, panel, badge, toneOf, bar, DataTable,
  fmtInt, fmtNum, fmtRate, fmtUS, fmtPct, timeCell,
} from '../dom.js';

const us = (key) => ({ key, num: true, cell: (r) => fmtUS(r[key]) });

const view = {
  id: 'performance',
  title: 'Performance',
  interval: 2000,

  mount(app) {
    this.app = app;
    this.latency = new DataTable([
      { key: 'name', label: 'Command', mono: true },
      { key: 'count', label: 'Calls', num: true, cell: (r) => fmtInt(r.count) },
      { ...us('p50_us'), label: 'p50' },
      { ...us('p90_us'), label: 'p90' },
      { ...us('p99_us'), label: 'p99' },
      { ...us('p999_us'), label: 'p99.9' },
      { ...us('max_us'), label: 'max' },
    ], { empty: 'No command has run yet.', sortKey: 'count', sortDesc: true, rowKey: (r) => r.name, caption: 'Latency per command' });

    this.slowlog = new DataTable([
      { key: 'id', label: 'ID', num: true },
      { key: 'time', label: 'Time', value: (r) => r.timestamp.unix, cell: (r) => timeCell(r.timestamp) },
      { key: 'duration_us', label: 'Duration', num: true, cell: (r) => fmtUS(r.duration_us) },
      { key: 'command', label: 'Command', value: (r) => r.command.join(' '), cell: (r) => h('code', { class: 'cmdline', title: r.command.join(' ') }, r.command.join(' ')) },
      { key: 'client_addr', label: 'Client', mono: true },
      { key: 'client_name', label: 'Client name', mono: true },
    ], { empty: 'The slow log is empty.', sortKey: 'id', sortDesc: true, rowKey: (r) => r.id, caption: 'Slow log' });

    // Scripts and functions that ran (/debug/api/scripts), slowest run
    // first. The source is shown as text, never as markup.
    this.scripts = new DataTable([
      { key: 'name', label: 'Script', value: (r) => r.name, cell: (r) => h('code', { class: 'mono', title: r.name }, r.kind === 'function' ? r.name + ' (' + r.library + ')' : r.name.slice(0, 12)) },
      { key: 'kind', label: 'Kind' },
      { key: 'calls', label: 'Runs', num: true, cell: (r) => fmtInt(r.calls) },
      { key: 'failed', label: 'Failed', num: true, cell: (r) => fmtInt(r.failed) },
      { ...us('mean_us'), label: 'Mean' },
      { ...us('max_us'), label: 'Slowest' },
      { ...us('total_us'), label: 'Total' },
      { key: 'last_run', label: 'Last run', value: (r) => r.last_run.unix, cell: (r) => timeCell(r.last_run) },
      { key: 'source', label: 'Source', value: (r) => r.source, cell: (r) => h('code', { class: 'cmdline', title: r.source }, r.source) },
    ], { empty: 'No script or function has run since start (SCRIPT FLUSH forgets the scripts).', sortKey: 'max_us', sortDesc: true, rowKey: (r) => r.kind + ':' + r.name, caption: 'Slow scripts' });

    this.events = new DataTable([
      { key: 'event', label: 'Event', mono: true },
      { key: 'latest', label: 'Latest', value: (r) => r.latest.unix, cell: (r) => timeCell(r.latest) },
      { key: 'latest_ms', label: 'Latest (ms)', num: true, cell: (r) => fmtInt(r.latest_ms) },
      { key: 'max_ms', label: 'Max (ms)', num: true, cell: (r) => fmtInt(r.max_ms) },
      { key: 'samples', label: 'Samples', num: true, value: (r) => r.history.length, cell: (r) => fmtInt(r.history.length) },
      { key: 'recent', label: 'Recent samples (ms, newest last)', sortable: false, value: () => 0, cell: (r) => h('span', { class: 'mono muted' }, r.history.slice(-8).map((s) => s.latency_ms).join(' · ')) },
    ], { empty: 'No latency events recorded.', sortKey: 'latest', sortDesc: true, rowKey: (r) => r.event, caption: 'Latency events' });

    this.hot = new DataTable([
      { key: 'shard_id', label: 'Shard', num: true },
      { key: 'status', label: 'Status', cell: (r) => badge(r.status, toneOf(r.status)) },
      { key: 'ops_per_sec', label: 'Ops/s', num: true, cell: (r) => fmtNum(r.ops_per_sec) },
      { key: 'reads_per_sec', label: 'Reads/s', num: true, cell: (r) => fmtNum(r.reads_per_sec) },
      { key: 'writes_per_sec', label: 'Writes/s', num: true, cell: (r) => fmtNum(r.writes_per_sec) },
      { key: 'percentage', label: 'Share of traffic', num: true, cell: (r) => bar(r.percentage, fmtPct(r.percentage), toneOf(r.status)) },
      { key: 'keys', label: 'Keys', num: true, cell: (r) => (r.keys == null ? 'late' : fmtInt(r.keys)) },
      { key: 'queue_depth', label: 'Queue', num: true, cell: (r) => fmtInt(r.queue_depth) },
    ], { empty: 'Hot-shard analysis is off ([hotshards] enabled = false).', sortKey: 'shard_id', rowKey: (r) => r.shard_id, caption: 'Hot shards' });

    this.slowInfo = h('span', { class: 'muted', id: 'perf-slowlog-info' });
    this.monInfo = h('span', { class: 'muted', id: 'perf-monitor-info' });
    this.hotInfo = h('div', { class: 'summary', id: 'perf-hot-summary' });
    this.recs = h('ul', { class: 'recs', id: 'perf-hot-recs' });

    this.el = h('section', { class: 'view', id: 'view-performance', 'aria-labelledby': 'h-performance' },
      h('h1', { id: 'h-performance', class: 'view-title' }, 'Performance'),
      h('div', { class: 'grid-2' },
        panel('Latency per command', h('div', { id: 'perf-latency' }, this.latency.el), h('span', { class: 'muted' }, 'since start or CONFIG RESETSTAT')),
        panel('Hot shards', h('div', { id: 'perf-hot' }, this.hotInfo, this.hot.el, this.recs))),
      panel('Slow log', h('div', { id: 'perf-slowlog' }, this.slowlog.el), this.slowInfo),
      panel('Slow scripts', h('div', { id: 'perf-scripts' }, this.scripts.el), h('span', { class: 'muted' }, 'EVAL scripts and functions, slowest run first')),
      panel('Latency events', h('div', { id: 'perf-events' }, this.events.el), this.monInfo));
  },

  async refresh(signal) {
    const [lat, slow, scripts, st] = await Promise.all([
      getJSON('latency', { signal }),
      getJSON('slowlog', { signal }),
      getJSON('scripts', { signal }),
      this.app.getStatus({ signal }),
    ]);
    this.scripts.setRows(scripts.scripts);
    this.app.status(st);
    this.latency.setRows(lat.commands);
    this.events.setRows(lat.events);
    setText(this.monInfo, lat.monitor.enabled
      ? 'monitor on: events of ' + lat.monitor.threshold_ms + ' ms or more'
      : 'monitor off (CONFIG SET latency-monitor-threshold <ms> turns it on)');

    this.slowlog.setRows(slow.entries);
    setText(this.slowInfo, slow.enabled
      ? fmtInt(slow.len) + ' of at most ' + fmtInt(slow.max_len) + ' entries · logs commands slower than ' + fmtUS(slow.log_slower_than_us)
      : 'off (slowlog-log-slower-than is -1)');

    const hs = st.hot_shards;
    if (!hs.enabled) {
      replace(this.hotInfo, 'Hot-shard analysis is off.');
      this.hot.setRows([]);
      replace(this.recs);
      return;
    }
    const byId = new Map(st.shards.map((s) => [s.id, s]));
    this.hot.setRows(hs.shards.map((s) => ({ ...s, keys: byId.get(s.shard_id)?.keys, queue_depth: byId.get(s.shard_id)?.queue_depth })));
    replace(this.hotInfo,
      h('span', null, 'Over ', h('strong', null, hs.period_secs + ' s'), ': ', h('strong', { class: 'num' }, fmtRate(hs.total_ops_per_sec))),
      h('span', null, 'imbalance (max/mean) ', h('strong', { class: 'num' }, hs.imbalance_ratio ? hs.imbalance_ratio.toFixed(2) : '—')),
      h('span', null, badge(hs.hot_count + ' hot', hs.hot_count ? 'crit' : ''), ' ', badge(hs.warm_count + ' warm', hs.warm_count ? 'warn' : '')));
    replace(this.recs, ...(hs.recommendations || []).map((r) => h('li', null, r)));
  },
};

export default view;
