// Diagnostic bundles: generate one (optionally with a CPU profile over a
// few seconds), download it, and list the bundles the server keeps. The
// downloads go through fetch so they carry the Bearer token; the browser
// then saves the response as svcdb-bundle-<id>.zip.

import { request, getJSON, saveBlob, ApiError, AuthError } from '../api.js';
import { h, setText, panel, DataTable, fmtBytes, fmtTime } from '../dom.js';

const ID = /^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$/;
const MAX_DURATION = 300;

// The list's fields, read defensively: created_at may be {unix, iso} or an
// ISO string, duration whole seconds.
function createdUnix(b) {
  const c = b.created_at;
  if (c && typeof c === 'object') return c.unix;
  if (typeof c === 'number') return c;
  const t = Date.parse(c);
  return Number.isNaN(t) ? 0 : t / 1000;
}

function durationSecs(b) {
  const d = b.duration ?? b.duration_secs;
  return typeof d === 'number' ? d : parseFloat(d) || 0;
}

const view = {
  id: 'bundles',
  title: 'Diagnostic bundles',
  interval: 10000,
  busy: false,

  mount(app) {
    this.app = app;
    this.duration = h('input', {
      type: 'number', id: 'bundle-duration', min: 0, max: MAX_DURATION, step: 1, value: '0', inputMode: 'numeric',
      'aria-describedby': 'bundle-duration-help',
    });
    this.button = h('button', { type: 'submit', class: 'btn btn-primary', id: 'bundle-generate' }, 'Generate and download');
    this.status = h('div', { class: 'msg', id: 'bundle-status', role: 'status', 'aria-live': 'polite', hidden: true });
    const form = h('form', { class: 'bundle-form', id: 'bundle-form', novalidate: true, onsubmit: (e) => { e.preventDefault(); this.generate(); } },
      h('label', { for: 'bundle-duration' }, 'CPU profile and rates over'),
      h('div', { class: 'login-row' }, this.duration, h('span', { class: 'unit' }, 'seconds'), this.button),
      h('p', { class: 'muted small', id: 'bundle-duration-help' },
        '0 (the default) takes a snapshot at once; 1 to ' + MAX_DURATION + ' also records a CPU profile and per-second rates over that many seconds before the bundle is returned.'));

    this.list = new DataTable([
      { key: 'id', label: 'Bundle', cell: (b) => h('code', null, b.id) },
      { key: 'created', label: 'Created', value: createdUnix, cell: (b) => fmtTime(createdUnix(b)) },
      { key: 'size_bytes', label: 'Size', num: true, cell: (b) => fmtBytes(b.size_bytes) },
      { key: 'duration', label: 'Profile', num: true, value: durationSecs, cell: (b) => (durationSecs(b) ? durationSecs(b) + ' s' : 'none') },
      {
        key: 'dl', label: '', sortable: false, value: () => 0,
        cell: (b) => h('button', { type: 'button', class: 'btn btn-small', onclick: (e) => this.download(b.id, e.currentTarget), 'aria-label': 'Download bundle ' + b.id }, 'Download'),
      },
    ], { empty: 'No bundles stored yet.', sortKey: 'created', sortDesc: true, rowKey: (b) => b.id, caption: 'Stored bundles' });

    this.el = h('section', { class: 'view', id: 'view-bundles', 'aria-labelledby': 'h-bundles' },
      h('h1', { id: 'h-bundles', class: 'view-title' }, 'Diagnostic bundles'),
      panel('Generate a bundle', h('div', null,
        h('p', null, 'A bundle is a ZIP archive of what support needs to troubleshoot this server: the status document, INFO, the configuration (secrets redacted), metrics, the slow log, latency, clients, cluster and hot-shard reports, recent logs, goroutines and a heap profile.'),
        form, this.status)),
      panel('Stored bundles', h('div', { id: 'bundle-list' }, this.list.el),
        h('span', { class: 'muted' }, 'newest first; old bundles are removed after their TTL')));
  },

  async refresh(signal) {
    const d = await getJSON('bundle/list', { signal });
    this.list.setRows(Array.isArray(d) ? d : d.bundles || []);
  },

  say(text, tone) {
    this.status.className = 'msg' + (tone ? ' ' + tone : '');
    setText(this.status, text);
    this.status.hidden = false;
  },

  async generate() {
    if (this.busy) return;
    const secs = Number(this.duration.value || 0);
    if (!Number.isInteger(secs) || secs < 0 || secs > MAX_DURATION) {
      this.say('The duration must be a whole number of seconds from 0 to ' + MAX_DURATION + '.', 'warn');
      this.duration.focus();
      return;
    }
    this.busy = true;
    this.button.disabled = true;
    const started = Date.now();
    const tick = () => this.say('Generating' + (secs ? ' (profiling for ' + secs + ' s)' : '') + '… ' + Math.floor((Date.now() - started) / 1000) + ' s', '');
    tick();
    const ticker = setInterval(tick, 1000);
    try {
      // Not tied to the view's poll: switching views does not cancel it.
      const res = await request('bundle/generate?duration=' + secs);
      const blob = await res.blob();
      const id = res.headers.get('X-Bundle-Id') || '';
      const name = ID.test(id) ? 'svcdb-bundle-' + id + '.zip' : 'svcdb-bundle.zip';
      saveBlob(blob, name);
      this.say('Bundle ' + (id || '(no id)') + ' generated: ' + fmtBytes(blob.size) + ', saved as ' + name + '.', 'ok');
      this.app.refreshNow();
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) {
        this.say('Another bundle is being generated. Try again' + (e.retryAfter ? ' in ' + e.retryAfter + ' s' : ' shortly') + '.', 'warn');
      } else if (!(e instanceof AuthError)) {
        this.say('Generating the bundle failed: ' + e.message, 'crit');
      }
    } finally {
      clearInterval(ticker);
      this.busy = false;
      this.button.disabled = false;
    }
  },

  async download(id, button) {
    if (!ID.test(id)) return; // the server's ids always match; never build a path from anything else
    button.disabled = true;
    try {
      const res = await request('bundle/' + id);
      saveBlob(await res.blob(), 'svcdb-bundle-' + id + '.zip');
    } catch (e) {
      if (e instanceof ApiError) this.say('Downloading ' + id + ' failed: ' + e.message, 'crit');
    } finally {
      button.disabled = false;
    }
  },
};

export default view;
