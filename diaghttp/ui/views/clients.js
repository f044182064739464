// Clients: the connections of /debug/api/clients, as CLIENT LIST shows them.
// Names, library names and commands are whatever clients sent: text only.

import { getJSON } from '../api.js';
import { h, setText, panel, DataTable, fmtInt, fmtBytes, fmtAge } from '../dom.js';

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
    this.el = h('section', { class: 'view', id: 'view-clients', 'aria-labelledby': 'h-clients' },
      h('h1', { id: 'h-clients', class: 'view-title' }, 'Clients'),
      panel('Connected clients', h('div', null,
        h('div', { class: 'toolbar' }, this.filter, this.count),
        h('div', { id: 'clients-table' }, this.table.el))));
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
      ? d.clients.filter((c) => [c.name, c.addr, c.laddr, c.lib_name, c.last_command, c.flags].some((s) => String(s).toLowerCase().includes(q)))
      : d.clients;
    setText(this.count, fmtInt(d.total) + ' connected' + (d.clients.length < d.total ? ' (first ' + fmtInt(d.clients.length) + ' listed)' : '') +
      (q ? ' · ' + rows.length + ' match' : ''));
    this.table.setRows(rows);
  },
};

export default view;
