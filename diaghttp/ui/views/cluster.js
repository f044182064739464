// Cluster: the topology of /debug/api/cluster: mode, every node with its
// status and slots, and this node's internal shards.

import { getJSON } from '../api.js';
import { h, replace, panel, kv, badge, toneOf, bar, DataTable, fmtInt, fmtPct, timeCell } from '../dom.js';

const slots = (n) => (n.slots.length ? n.slots.map((s) => (s.start === s.end ? s.start : s.start + '-' + s.end)).join(', ') : 'none');

const view = {
  id: 'cluster',
  title: 'Cluster',
  interval: 5000,

  mount() {
    this.summary = h('div', { id: 'cl-summary' });
    this.nodes = new DataTable([
      { key: 'id', label: 'Node id', cell: (n) => h('code', { title: n.id }, n.id) },
      { key: 'address', label: 'Address', mono: true },
      { key: 'role', label: 'Role' },
      { key: 'status', label: 'Status', cell: (n) => badge(n.status, toneOf(n.status)) },
      { key: 'shard_count', label: 'Shards', num: true },
      { key: 'event_loops', label: 'Event loops', num: true },
      { key: 'slots', label: 'Slots', value: slots, cell: (n) => h('span', { class: 'mono' }, slots(n)) },
      { key: 'replicas', label: 'Replicas', num: true, value: (n) => n.replicas.length, cell: (n) => String(n.replicas.length) },
      { key: 'myself', label: '', sortable: false, value: () => 0, cell: (n) => (n.myself ? badge('this node', '') : '') },
    ], { empty: 'No nodes.', sortKey: 'address', rowKey: (n) => n.id, caption: 'Nodes' });
    this.shards = new DataTable([
      { key: 'id', label: 'Shard', num: true },
      { key: 'keys', label: 'Keys', num: true, cell: (s) => fmtInt(s.keys) },
      { key: 'share', label: 'Share of keys', num: true, cell: (s) => bar(s.share, fmtPct(s.share)) },
      { key: 'expires', label: 'With TTL', num: true, cell: (s) => fmtInt(s.expires) },
      { key: 'queue_depth', label: 'Queue depth', num: true, cell: (s) => fmtInt(s.queue_depth) },
    ], { empty: 'No shards.', sortKey: 'id', rowKey: (s) => s.id, caption: 'Shards of this node' });

    this.el = h('section', { class: 'view', id: 'view-cluster', 'aria-labelledby': 'h-cluster' },
      h('h1', { id: 'h-cluster', class: 'view-title' }, 'Cluster'),
      panel('Topology', this.summary),
      panel('Nodes', h('div', { id: 'cl-nodes' }, this.nodes.el)),
      panel('Shards of this node', h('div', { id: 'cl-shards' }, this.shards.el),
        h('span', { class: 'muted' }, 'a key\'s shard is a hash of the key (or its {hash tag})')));
  },

  async refresh(signal) {
    const d = await getJSON('cluster', { signal });
    const n = d.node;
    const up = d.nodes.filter((x) => x.status === 'online').length;
    replace(this.summary, kv([
      ['Mode', h('strong', null, d.mode)],
      ['Cluster enabled', d.cluster_enabled ? 'yes' : 'no'],
      ['Nodes', up + ' of ' + d.nodes.length + ' online'],
      ['This node', h('span', null, h('code', null, n.id), ' ', badge(n.status, toneOf(n.status)))],
      ['Slots', n.owns_all_slots ? 'all 16384 (' + slots(n) + ')' : slots(n)],
      ['As of', timeCell(d.generated_at)],
    ]));
    this.nodes.setRows(d.nodes);
    const total = n.shards.reduce((a, s) => a + s.keys, 0);
    this.shards.setRows(n.shards.map((s) => ({ ...s, share: total ? (100 * s.keys) / total : 0 })));
  },
};

export default view;
