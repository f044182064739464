// Overview: health, the figures an operator looks at first, throughput,
// memory, connection and network charts over the last minutes, server
// identity and the busiest commands. Polls /debug/api/metrics every second
// (its rates are computed by the server) and the status document every
// fifth poll.

import { getJSON } from '../api.js';
import { TimeChart, byteIncrs } from '../chart.js';
import {
  h, replace, setText, panel, kv, badge, toneOf, DataTable,
  fmtInt, fmtNum, fmtRate, fmtBytes, fmtByteRate, fmtAge, fmtPct, timeCell,
} from '../dom.js';

const STATUS_EVERY = 5;

function card(label, id) {
  const value = h('div', { class: 'card-value num', id: 'ov-' + id }, '—');
  const sub = h('div', { class: 'card-sub' }, '');
  return { el: h('div', { class: 'card' }, h('div', { class: 'card-label' }, label), value, sub), value, sub };
}

const view = {
  id: 'overview',
  title: 'Overview',
  interval: 1000,
  polls: 0,

  mount(app) {
    this.app = app;
    this.cards = {
      ops: card('Throughput', 'ops'),
      clients: card('Connected clients', 'clients'),
      memory: card('Memory used', 'memory'),
      keys: card('Keys', 'keys'),
      hits: card('Keyspace hit ratio', 'hits'),
      net: card('Network', 'net'),
    };
    this.charts = {
      ops: new TimeChart({ title: 'Throughput (commands/s)', series: [{ label: 'ops/s', color: '--chart-1' }], fmt: fmtNum }),
      memory: new TimeChart({ title: 'Memory used', series: [{ label: 'used', color: '--chart-2' }], fmt: fmtBytes, incrs: byteIncrs }),
      clients: new TimeChart({ title: 'Connected clients', series: [{ label: 'clients', color: '--chart-3' }], fmt: fmtInt }),
      net: new TimeChart({
        title: 'Network (bytes/s)',
        series: [{ label: 'in', color: '--chart-1' }, { label: 'out', color: '--chart-4' }],
        fmt: fmtBytes,
        incrs: byteIncrs,
      }),
    };
    this.health = h('div', { class: 'health', id: 'ov-health' });
    this.info = h('div', { id: 'ov-info' }, kv([]));
    this.top = new DataTable([
      { key: 'name', label: 'Command', mono: true },
      { key: 'now', label: 'Calls/s (1 s)', num: true, cell: (r) => fmtNum(r.now) },
      { key: 'avg', label: 'Calls/s (60 s)', num: true, cell: (r) => fmtNum(r.avg) },
      { key: 'calls', label: 'Calls (60 s)', num: true, cell: (r) => fmtInt(r.calls) },
    ], { empty: 'No commands in the last minute.', sortKey: 'avg', sortDesc: true, rowKey: (r) => r.name, caption: 'Busiest commands' });

    this.el = h('section', { class: 'view', id: 'view-overview', 'aria-labelledby': 'h-overview' },
      h('h1', { id: 'h-overview', class: 'view-title' }, 'Overview'),
      this.health,
      h('div', { class: 'cards' }, Object.values(this.cards).map((c) => c.el)),
      h('div', { class: 'grid-2' }, Object.values(this.charts).map((c) => c.el)),
      h('div', { class: 'grid-2' },
        panel('Server', this.info),
        panel('Busiest commands', this.top.el, h('span', { class: 'muted' }, 'last 60 s'))));
  },

  shown() {
    this.polls = 0; // the status document at once
  },

  async refresh(signal) {
    const wantStatus = this.polls++ % STATUS_EVERY === 0;
    const [m, st] = await Promise.all([
      getJSON('metrics', { signal }),
      wantStatus ? this.app.getStatus({ signal }) : null,
    ]);
    this.renderMetrics(m);
    if (st) {
      this.status = st;
      this.app.status(st);
      this.renderStatus(st, m);
    }
  },

  renderMetrics(m) {
    const r1 = m.rates.last_1s, r60 = m.rates.last_60s;
    const c = this.cards;
    setText(c.ops.value, fmtRate(r1.ops_per_sec));
    setText(c.ops.sub, fmtRate(r60.ops_per_sec) + ' avg over ' + r60.window_secs + ' s · ' + fmtInt(m.commands.processed_total) + ' total');

    setText(c.clients.value, fmtInt(m.clients.connected));
    const cpct = m.clients.max_clients ? (100 * m.clients.connected) / m.clients.max_clients : null;
    setText(c.clients.sub, 'of ' + fmtInt(m.clients.max_clients) + ' max (' + fmtPct(cpct) + ') · ' +
      fmtInt(m.clients.connections_rejected_total.maxclients + m.clients.connections_rejected_total.shutting_down) + ' rejected');

    setText(c.memory.value, fmtBytes(m.memory.used_bytes));
    setText(c.memory.sub, m.memory.maxmemory_bytes
      ? 'of ' + fmtBytes(m.memory.maxmemory_bytes) + ' maxmemory (' + fmtPct((100 * m.memory.used_bytes) / m.memory.maxmemory_bytes) + ')'
      : 'no maxmemory limit');

    setText(c.keys.value, fmtInt(m.keyspace.keys));
    setText(c.keys.sub, fmtInt(m.keyspace.expires) + ' with a TTL · ' + fmtRate(r60.expired_keys_per_sec) + ' expiring');

    const lookups = r60.keyspace_hits_per_sec + r60.keyspace_misses_per_sec;
    setText(c.hits.value, lookups > 0 ? fmtPct((100 * r60.keyspace_hits_per_sec) / lookups) : '—');
    setText(c.hits.sub, lookups > 0
      ? fmtRate(r60.keyspace_hits_per_sec) + ' hits · ' + fmtRate(r60.keyspace_misses_per_sec) + ' misses (60 s)'
      : 'no lookups in the last minute');

    setText(c.net.value, fmtByteRate(r1.net_input_bytes_per_sec + r1.net_output_bytes_per_sec));
    setText(c.net.sub, fmtByteRate(r1.net_input_bytes_per_sec) + ' in · ' + fmtByteRate(r1.net_output_bytes_per_sec) + ' out');

    const t = Date.now() / 1000;
    this.charts.ops.push(t, [r1.ops_per_sec]);
    this.charts.memory.push(t, [m.memory.used_bytes]);
    this.charts.clients.push(t, [m.clients.connected]);
    this.charts.net.push(t, [r1.net_input_bytes_per_sec, r1.net_output_bytes_per_sec]);

    const now = new Map(r1.commands.map((x) => [x.name, x.ops_per_sec]));
    this.top.setRows(r60.commands.slice(0, 10).map((x) => ({
      name: x.name, calls: x.calls, avg: x.ops_per_sec, now: now.get(x.name) || 0,
    })));
    this.metrics = m;
    if (this.status) this.renderInfo(this.status, m);
  },

  renderStatus(st, m) {
    const word = st.health.status;
    const issues = st.health.issues || [];
    this.health.className = 'health ' + toneOf(word);
    replace(this.health,
      h('div', { class: 'health-head' },
        badge(word, toneOf(word)),
        h('span', null, issues.length ? issues.length + (issues.length === 1 ? ' issue' : ' issues') : 'No issues reported'),
        h('span', { class: 'muted' }, 'state ' + st.svc.state + ' · up ' + fmtAge(st.svc.uptime_seconds))),
      issues.length ? h('ul', { class: 'issues' }, issues.map((i) =>
        h('li', null, badge(i.severity, toneOf(i.severity)), h('code', null, i.code), ' ', i.message))) : null);
    this.renderInfo(st, m);
  },

  renderInfo(st, m) {
    const s = st.svc, c = st.cluster;
    const dbs = (m?.keyspace.databases || []).map((d) => 'db' + d.db + ': ' + fmtInt(d.keys) + ' keys').join(', ');
    replace(this.info, kv([
      ['Version', s.version + ' (Redis ' + s.redis_version + ' compatible)'],
      ['Build', s.git_commit + ' · ' + s.go_version],
      ['Node id', h('code', null, c.node_id)],
      ['Address', c.address],
      ['PID', String(s.pid)],
      ['Started', timeCell(s.started_at)],
      ['Uptime', fmtAge(s.uptime_seconds)],
      ['Shards · event loops', c.shards + ' · ' + c.event_loops + ' (' + c.drain_strategy + ')'],
      ['Keyspace', dbs || 'empty'],
      ['Persistence', persistenceText(st.persistence)],
    ]));
  },
};

// persistenceText says what is saved and whether writes are refused.
function persistenceText(p) {
  if (p.writes_refused) return 'failing: ' + p.writes_refused;
  if (p.loading) return 'loading the dataset';
  const parts = [];
  if (p.rdb.enabled) parts.push('RDB snapshots (last ' + p.rdb.last_bgsave_status + ')');
  if (p.aof.enabled) parts.push('AOF (appendfsync ' + p.aof.fsync + ')');
  return parts.length ? parts.join(' · ') : 'off (in memory only)';
}

export default view;
