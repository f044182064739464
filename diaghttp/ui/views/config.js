// Configuration: every parameter of /debug/api/config with its value,
// default, where the value came from, and whether CONFIG SET can change it.
// Loaded when the view opens and on Refresh: configuration rarely changes.

import { getJSON } from '../api.js';
import { h, setText, panel, badge, DataTable } from '../dom.js';

const sourceTone = { default: '', file: 'info', env: 'info', flag: 'info', runtime: 'warn' };

const view = {
  id: 'config',
  title: 'Configuration',
  interval: 0,

  mount(app) {
    this.app = app;
    this.params = [];
    this.table = new DataTable([
      {
        key: 'name', label: 'Parameter',
        cell: (p) => h('div', null, h('code', { class: 'pname' }, p.name),
          h('div', { class: 'muted small' }, '[' + p.table + '] ' + p.key)),
      },
      {
        key: 'value', label: 'Value',
        cell: (p) => h('span', { class: 'mono' + (p.value !== p.default ? ' changed' : '') }, p.value === '' ? '""' : p.value,
          p.unit ? h('span', { class: 'muted' }, ' ' + p.unit) : null),
      },
      { key: 'default', label: 'Default', cell: (p) => h('span', { class: 'mono muted' }, p.default === '' ? '""' : p.default) },
      { key: 'source', label: 'Source', cell: (p) => badge(p.source, sourceTone[p.source] || '') },
      { key: 'mutable', label: 'Runtime', value: (p) => (p.mutable ? 0 : 1), cell: (p) => (p.mutable ? 'CONFIG SET' : 'restart') },
      { key: 'doc', label: 'Description', cell: (p) => h('span', { class: 'doc' }, p.secret ? h('span', null, badge('secret', 'warn'), ' ') : null, p.doc) },
    ], { empty: 'No parameter matches.', rowKey: (p) => p.name, caption: 'Configuration parameters', wrap: true });

    this.filter = h('input', {
      type: 'search', id: 'cfg-filter', placeholder: 'Filter by name, table or description',
      'aria-label': 'Filter parameters', oninput: () => this.render(),
    });
    this.changedOnly = h('input', { type: 'checkbox', id: 'cfg-changed', onchange: () => this.render() });
    this.count = h('span', { class: 'muted', id: 'cfg-count' });
    const refresh = h('button', { type: 'button', class: 'btn', onclick: () => app.refreshNow() }, 'Refresh');

    this.el = h('section', { class: 'view', id: 'view-config', 'aria-labelledby': 'h-config' },
      h('h1', { id: 'h-config', class: 'view-title' }, 'Configuration'),
      panel('Parameters', h('div', null,
        h('div', { class: 'toolbar' }, this.filter,
          h('label', { class: 'check' }, this.changedOnly, ' Changed from default only'),
          this.count, refresh),
        h('div', { id: 'cfg-table' }, this.table.el)),
      h('span', { class: 'muted' }, 'secrets show as (redacted)')));
  },

  async refresh(signal) {
    const d = await getJSON('config', { signal });
    this.params = d.parameters;
    this.render();
  },

  render() {
    const q = this.filter.value.trim().toLowerCase();
    const rows = this.params.filter((p) =>
      (!this.changedOnly.checked || p.value !== p.default) &&
      (!q || [p.name, p.table, p.key, p.doc, p.value].some((s) => String(s).toLowerCase().includes(q))));
    const changed = this.params.filter((p) => p.value !== p.default).length;
    setText(this.count, rows.length + ' of ' + this.params.length + ' shown · ' + changed + ' changed from default');
    this.table.setRows(rows);
  },
};

export default view;
