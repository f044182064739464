// Cluster: the topology of /debug/api/cluster: mode, every node with its
// status and slots, the replication topology (this node, its master or its
// replicas, with links, offsets and lag), and this node's internal shards.

import { getJSON } from '../api.js';
import { h, replace, panel, kv, badge, toneOf, bar, DataTable, fmtInt, fmtPct, fmtBytes, fmtAge, timeCell } from '../dom.js';

// laggingSeconds: a replica whose last ACK (or a replica whose last byte
// from its master) is older than this is flagged. Replicas ACK every
// second and masters PING every 10 s, so a healthy link stays well under
// it; it is min-replicas-max-lag's default.
const laggingSeconds = 10;

// replicaHealth judges one of this master's replicas: [word, tone].
function replicaHealth(r) {
  if (r.state !== 'online') return ['syncing (' + r.state + ')', 'warn'];
  if (r.lag_seconds > laggingSeconds) return ['lagging', 'crit'];
  return ['in sync', 'ok'];
}

// quietLinkSeconds: a replica that heard nothing from its master for this
// long (twice the master's 10 s PING period; the link times out at 60 s)
// has a link that may be dead.
const quietLinkSeconds = 20;

// linkHealth judges this replica's link to its master: [word, tone].
function linkHealth(rep) {
  if (!rep.link_up) return ['link down', 'crit'];
  if (rep.lag_seconds > quietLinkSeconds) return ['quiet link', 'warn'];
  return ['link up', 'ok'];
}

// bytesBehind is how far a replica's last ACK is behind its master's
// offset (0 when it acknowledged everything).
const bytesBehind = (rep, r) => Math.max(0, rep.offset - r.offset);

// topoNode is one box of the replication drawing.
function topoNode(tone, title, ...lines) {
  return h('div', { class: 'topo-node ' + (tone || '') }, h('div', { class: 'topo-title' }, title), lines.map((l) => h('div', null, l)));
}

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
    this.replSummary = h('div', { id: 'cl-repl-summary' });
    this.topo = h('div', { class: 'topo', id: 'cl-repl-topo', role: 'img', 'aria-label': 'replication topology' });
    this.replicas = new DataTable([
      { key: 'addr', label: 'Replica', mono: true },
      { key: 'health', label: 'Health', value: (r) => r.health[0], cell: (r) => badge(r.health[0], r.health[1]) },
      { key: 'state', label: 'State' },
      { key: 'offset', label: 'ACK offset', num: true, cell: (r) => fmtInt(r.offset) },
      { key: 'behind', label: 'Lag (bytes)', num: true, title: 'the master\'s offset less the replica\'s last ACK', cell: (r) => fmtBytes(r.behind) },
      { key: 'lag_seconds', label: 'Lag (s)', num: true, title: 'seconds since the replica\'s last ACK', cell: (r) => fmtInt(r.lag_seconds) },
    ], { empty: 'No replicas attached.', sortKey: 'addr', rowKey: (r) => r.addr, caption: 'Replicas of this node' });

    this.el = h('section', { class: 'view', id: 'view-cluster', 'aria-labelledby': 'h-cluster' },
      h('h1', { id: 'h-cluster', class: 'view-title' }, 'Cluster'),
      panel('Topology', this.summary),
      panel('Nodes', h('div', { id: 'cl-nodes' }, this.nodes.el)),
      panel('Replication', h('div', { id: 'cl-repl' }, this.replSummary, this.topo, h('div', { id: 'cl-replicas' }, this.replicas.el)),
        h('span', { class: 'muted' }, 'lagging: no ACK for more than ' + laggingSeconds + ' s')),
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
    this.drawReplication(d.replication, n);
    const total = n.shards.reduce((a, s) => a + s.keys, 0);
    this.shards.setRows(n.shards.map((s) => ({ ...s, share: total ? (100 * s.keys) / total : 0 })));
  },

  // drawReplication shows this node's role and, on a replica, its master
  // and the link; on a master, each replica with its ACK offset and lag,
  // a broken link or a lagging replica marked crit.
  drawReplication(rep, n) {
    if (!rep) {
      replace(this.replSummary, h('span', { class: 'muted' }, 'No replication state in this server\'s answer.'));
      replace(this.topo);
      this.replicas.setRows([]);
      return;
    }
    const self = (tone) => topoNode(tone, h('span', null, 'this node ', badge(rep.role, rep.role === 'master' ? 'ok' : '')),
      h('span', { class: 'mono' }, n.address), 'offset ' + fmtInt(rep.offset));
    if (rep.role === 'replica') {
      const [word, tone] = linkHealth(rep);
      const master = rep.master_host + ':' + rep.master_port;
      replace(this.replSummary, kv([
        ['Role', h('strong', null, 'replica')],
        ['Master', h('span', { class: 'mono' }, master)],
        ['Link', badge(word, tone)],
        [rep.link_up ? 'Last byte from the master' : 'Link down for', fmtAge(rep.lag_seconds)],
        ['Processed offset', fmtInt(rep.offset)],
      ]));
      replace(this.topo,
        topoNode('', 'master', h('span', { class: 'mono' }, master)),
        h('div', { class: 'topo-link ' + tone }, h('span', { class: 'topo-arrow' }, '↓'), ' ', badge(word, tone), ' ', fmtAge(rep.lag_seconds)),
        self(tone));
      this.replicas.setRows([]);
      return;
    }
    const rows = (rep.replicas || []).map((r) => ({ ...r, addr: r.ip + ':' + r.port, behind: bytesBehind(rep, r), health: replicaHealth(r) }));
    const bad = rows.filter((r) => r.health[1] === 'crit').length;
    replace(this.replSummary, kv([
      ['Role', h('strong', null, 'master')],
      ['Replicas', h('span', null, rows.length + ' attached, ' + rep.online_replicas + ' online', bad ? ', ' : null, bad ? badge(bad + ' lagging', 'crit') : null)],
      ['Offset', fmtInt(rep.offset)],
      ['Backlog', fmtBytes(rep.backlog_bytes)],
      ['Syncs served', fmtInt(rep.full_syncs) + ' full, ' + fmtInt(rep.partial_syncs) + ' partial'],
      rep.min_replicas_to_write ? ['min-replicas-to-write', rep.good_replicas + ' good of ' + rep.min_replicas_to_write + ' needed'] : null,
    ].filter(Boolean)));
    replace(this.topo, self(bad ? 'crit' : 'ok'),
      rows.length === 0 ? h('div', { class: 'muted topo-none' }, 'no replicas') :
        h('div', { class: 'topo-children' }, rows.map((r) => h('div', { class: 'topo-branch', dataset: { replica: r.addr } },
          h('div', { class: 'topo-link ' + r.health[1] }, h('span', { class: 'topo-arrow' }, '↓'), ' ', badge(r.health[0], r.health[1])),
          topoNode(r.health[1], h('span', { class: 'mono' }, r.addr), 'state ' + r.state, 'ACK ' + fmtInt(r.offset),
            'behind ' + fmtBytes(r.behind) + ', ' + fmtInt(r.lag_seconds) + ' s')))));
    this.replicas.setRows(rows);
  },
};

export default view;
