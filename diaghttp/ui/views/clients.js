// Clients: the connections of /debug/api/clients, as CLIENT LIST shows them,
// with each one's state spelled out (blocked, paused by CLIENT PAUSE,
// tracking, monitor); and the Keyspace events panel, which watches the
// notifications matching a pattern for a bounded time
// (/debug/api/keyspace-events: at most 30 s and 1000 messages).
// Names, library names, commands, channels and messages are whatever
// clients sent: text only.

import { getJSON } from '../api.js';
import { h, setText, replace, panel, badge, DataTable, fmtInt, fmtBytes, fmtAge, fmtClock } from '../dom.js';

// stateBadges spells out what the flags encode.
function stateBadges(c) {
  const out = [];
  if (c.blocked) out.push(badge('blocked', 'warn'));
  if (c.paused) out.push(badge('paused', 'warn'));
  if (c.tracking) out.push(badge('tracking'));
  if (c.monitor) out.push(badge('monitor'));
  return out;
}

function stateWords(c) {
  return ['blocked', 'paused', 'tracking', 'monitor'].filter((k) => c[k]).join(' ');
}

const view = {
  id: 'clients',
  title: 'Clients',
  interval: 2000,

  mount() {
    this.table = new DataTable([
      { key: 'id', label: 'ID', num: true },
      { key: 'name', label: 'Name', cell: (c) => (c.name ? h('code', { class: 'client-name' }, c.name) : '') },
      { key: 'addr', label: 'Address', cell: (c) => h('span', { class: 'mono', title: 'to ' + c.laddr }, c.addr) },
      { key: 'lib', label: 'Library', wrap: true, value: (c) => c.lib_name, cell: (c) => [c.lib_name, c.lib_ver].filter(Boolean).join(' ') },
      { key: 'age', label: 'Age', num: true, cell: (c) => fmtAge(c.age) },
      { key: 'idle', label: 'Idle', num: true, cell: (c) => fmtAge(c.idle) },
      { key: 'state', label: 'State', value: (c) => stateWords(c), cell: (c) => h('span', { class: 'client-state' }, stateBadges(c)), title: 'blocked in a command, paused by CLIENT PAUSE, client-side caching on, MONITOR' },
      { key: 'flags', label: 'Flags', mono: true, title: 'CLIENT LIST flags' },
      { key: 'db', label: 'DB', num: true },
      { key: 'resp', label: 'RESP', num: true },
      { key: 'last_command', label: 'Last command', mono: true },
      { key: 'commands', label: 'Commands', num: true, cell: (c) => fmtInt(c.commands) },
      { key: 'bytes', label: 'In / out', num: true, value: (c) => c.bytes_in + c.bytes_out, cell: (c) => fmtBytes(c.bytes_in) + ' / ' + fmtBytes(c.bytes_out), title: 'bytes received / sent' },
      { key: 'buffers', label: 'Buffers', num: true, value: (c) => c.input_buffer + c.output_buffer, cell: (c) => fmtBytes(c.input_buffer) + ' / ' + fmtBytes(c.output_buffer), title: 'input (query) buffer / output buffer' },
    ], { empty: 'No client matches.', sortKey: 'id', rowKey: (c) => c.id, caption: 'Connected clients' });

    this.filter = h('input', {
      type: 'search', id: 'cl-filter', placeholder: 'Filter by name, address, library or command',
      'aria-label': 'Filter clients', oninput: () => this.render(),
    });
    this.count = h('span', { class: 'muted', id: 'clients-count' });
    this.evPattern = h('input', {
      type: 'text', id: 'ev-pattern', value: '__key*__:*', maxLength: 256,
      'aria-label': 'Channel pattern (glob), e.g. __keyevent@0__:expired',
    });
    this.evSeconds = h('input', { type: 'number', id: 'ev-seconds', value: '10', min: '1', max: '30', 'aria-label': 'Seconds to watch (1 to 30)' });
    this.evButton = h('button', { type: 'button', id: 'ev-watch', onclick: () => this.watchEvents() }, 'Watch');
    this.evStatus = h('span', { class: 'muted', id: 'ev-status' }, 'Watches keyspace notifications for up to 30 s and 100 messages.');
    this.evList = h('ol', { id: 'ev-list', class: 'mono' });
    this.el = h('section', { class: 'view', id: 'view-clients', 'aria-labelledby': 'h-clients' },
      h('h1', { id: 'h-clients', class: 'view-title' }, 'Clients'),
      panel('Connected clients', h('div', null,
        h('div', { class: 'toolbar' }, this.filter, this.count),
        h('div', { id: 'clients-table' }, this.table.el))),
      panel('Keyspace events', h('div', { id: 'keyspace-events' },
        h('div', { class: 'toolbar' }, this.evPattern, this.evSeconds, this.evButton, this.evStatus),
        this.evList)));
  },

  // watchEvents runs one bounded watch; the button stays disabled while it
  // lasts, so one tab holds at most one watch.
  async watchEvents() {
    const secs = Math.min(30, Math.max(1, parseInt(this.evSeconds.value, 10) || 10));
    this.evButton.disabled = true;
    setText(this.evStatus, 'Watching ' + this.evPattern.value + ' for ' + secs + ' s…');
    try {
      const d = await getJSON('keyspace-events?pattern=' + encodeURIComponent(this.evPattern.value) + '&seconds=' + secs + '&max=100');
      replace(this.evList, d.events.map((e) => h('li', null, fmtClock(new Date(e.at_ms)), ' ', h('code', null, e.channel), ' ', h('code', null, e.message))));
      setText(this.evStatus, fmtInt(d.events.length) + ' event(s)' + (d.dropped ? ', ' + fmtInt(d.dropped) + ' more not kept' : '') +
        (d.notify_keyspace_events ? ' · notify-keyspace-events ' + d.notify_keyspace_events : ' · notify-keyspace-events is empty: nothing is published'));
    } catch (err) {
      setText(this.evStatus, 'Watch failed: ' + err.message);
    } finally {
      this.evButton.disabled = false;
    }
  },

  async refresh(signal) {
    const d = await getJSON('clients', { signal });
    this.doc = d;
    this.render();
  },

  render() {
    const d = this.doc;
    if (!d) return;
    const q = this.filter.value.trim().toLowerCase();
    const rows = q
      ? d.clients.filter((c) => [c.name, c.addr, c.laddr, c.lib_name, c.last_command, c.flags, stateWords(c)].some((s) => String(s).toLowerCase().includes(q)))
      : d.clients;
    setText(this.count, fmtInt(d.total) + ' connected' + (d.clients.length < d.total ? ' (first ' + fmtInt(d.clients.length) + ' listed)' : '') +
      (q ? ' · ' + rows.length + ' match' : ''));
    this.table.setRows(rows);
  },
};

export default view;
