// Users: the ACL users of /debug/api/users with their rules as ACL LIST
// shows them, without password hashes (the server never sends them), and
// how many passwords each has.

import { getJSON } from '../api.js';
import { h, setText, panel, DataTable, fmtInt } from '../dom.js';

const view = {
  id: 'users',
  title: 'Users',
  interval: 5000,

  mount() {
    this.table = new DataTable([
      { key: 'name', label: 'User', cell: (u) => h('code', { class: 'user-name' }, u.name) },
      { key: 'enabled', label: 'State', value: (u) => (u.enabled ? 1 : 0), cell: (u) => (u.enabled ? 'on' : 'off') },
      { key: 'auth', label: 'Authentication', value: (u) => (u.nopass ? -1 : u.passwords),
        cell: (u) => (u.nopass ? 'no password (nopass)' : fmtInt(u.passwords) + (u.passwords === 1 ? ' password' : ' passwords')) },
      { key: 'rules', label: 'Rules', mono: true, wrap: true, title: 'as ACL LIST shows them, password hashes left out' },
    ], { empty: 'No users.', sortKey: 'name', rowKey: (u) => u.name, caption: 'ACL users' });
    this.count = h('span', { class: 'muted', id: 'users-count' });
    this.el = h('section', { class: 'view', id: 'view-users', 'aria-labelledby': 'h-users' },
      h('h1', { id: 'h-users', class: 'view-title' }, 'Users'),
      panel('ACL users', h('div', null,
        h('div', { class: 'toolbar' }, this.count),
        h('div', { id: 'users-table' }, this.table.el))));
  },

  async refresh(signal) {
    const d = await getJSON('users', { signal });
    setText(this.count, fmtInt(d.users.length) + (d.users.length === 1 ? ' user' : ' users'));
    this.table.setRows(d.users);
  },
};

export default view;
