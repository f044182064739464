// svcdb debug UI: sign-in, navigation between views, and polling. Only the
// active view polls, and only while the tab is visible; a view's next poll is
// scheduled when its previous one has finished, so requests never pile up.

import { token, request, getStatus, onAuthFailure, AuthError } from './api.js';
import { h, replace, setText, fmtClock, toneOf } from './dom.js';
import overview from './views/overview.js';
import perf from './views/performance.js';
import cluster from './views/cluster.js';
import config from './views/config.js';
import bundles from './views/bundles.js';
import clients from './views/clients.js';
import users from './views/users.js';

const views = [overview, perf, cluster, config, bundles, clients, users];
const byId = new Map(views.map((v) => [v.id, v]));

const $ = (id) => document.getElementById(id);
const els = {
  login: $('login'), form: $('login-form'), input: $('token'), msg: $('login-msg'),
  nav: $('nav'), main: $('views'), conn: $('conn-status'), logout: $('logout'),
  server: $('server-id'), health: $('server-health'),
};

// ---- shared state the views report to --------------------------------------

const app = {
  // status is called by views that read /status/json; the header shows the
  // server's identity and health from it.
  status(doc) {
    const s = doc.svc || {};
    setText(els.server, [doc.cluster?.address, s.version && 'v' + s.version].filter(Boolean).join(' · '));
    const word = doc.health?.status || 'unknown';
    els.health.className = 'pill ' + toneOf(word);
    setText(els.health, word);
    els.health.hidden = false;
    els.health.title = (doc.health?.issues || []).map((i) => i.code + ': ' + i.message).join('\n');
  },
  getStatus,
};

// ---- polling ------------------------------------------------------------------

let active = null; // the view shown
let timer = 0;
let ctrl = null; // aborts the active view's in-flight requests
let generation = 0;
let signedIn = false;

function setConn(state, text) {
  els.conn.dataset.state = state;
  setText(els.conn, text);
}

function stopPolling() {
  clearTimeout(timer);
  generation++;
  if (ctrl) ctrl.abort();
  ctrl = null;
}

async function poll() {
  if (!signedIn || !active || document.visibilityState !== 'visible') return;
  const gen = ++generation;
  const view = active;
  ctrl = new AbortController();
  let ok = true;
  try {
    await view.refresh(ctrl.signal);
    if (gen === generation) setConn('live', (view.interval ? 'Live · ' : 'Loaded · ') + fmtClock(new Date()));
  } catch (e) {
    if (e.name === 'AbortError' || gen !== generation) return;
    if (e instanceof AuthError) return; // the sign-in form has taken over
    ok = false;
    setConn('error', 'Update failed: ' + e.message + ' · retrying');
  }
  if (gen !== generation || view !== active) return;
  if (view.interval) timer = setTimeout(poll, ok ? view.interval : Math.max(view.interval, 3000));
}

// refreshNow re-polls the active view at once (views call it after an action).
app.refreshNow = () => {
  stopPolling();
  poll();
};

document.addEventListener('visibilitychange', () => {
  if (!signedIn) return;
  if (document.visibilityState === 'visible') {
    poll();
  } else {
    stopPolling();
    setConn('paused', 'Paused while the tab is hidden');
  }
});

// ---- navigation ------------------------------------------------------------------

function route() {
  const id = location.hash.replace(/^#\/?/, '');
  return byId.has(id) ? byId.get(id) : overview;
}

function show(view) {
  if (active === view) return;
  stopPolling();
  active = view;
  for (const v of views) {
    const on = v === view;
    v.el.hidden = !on;
    const link = els.nav.querySelector('a[data-view="' + v.id + '"]');
    if (on) {
      link.setAttribute('aria-current', 'page');
      link.scrollIntoView({ block: 'nearest', inline: 'nearest' }); // a phone's tab row scrolls
    } else {
      link.removeAttribute('aria-current');
    }
  }
  document.title = view.title + ' · svcdb debug';
  if (view.shown) view.shown();
  poll();
}

window.addEventListener('hashchange', () => {
  if (signedIn) show(route());
});

// ---- sign-in ------------------------------------------------------------------------

const MESSAGES = {
  unauthorized: [
    'The server did not accept this token (401 Unauthorized).',
    'Enter the token configured on the server: [http] token in the configuration file, the SVC_HTTP_TOKEN environment variable or the --http-token flag.',
  ],
  expired: [
    'The token of this session is no longer accepted (401 Unauthorized): the server\'s token may have changed.',
    'Enter the current token.',
  ],
  forbidden: [
    'The debug API is switched off: this server has no HTTP token configured (403 Forbidden).',
    'Set one with [http] token in the configuration file, the SVC_HTTP_TOKEN environment variable or the --http-token flag, restart svcdb, then sign in with it.',
  ],
};

function loginMessage(kind, detail) {
  const lines = MESSAGES[kind] || [kind];
  replace(els.msg, h('strong', null, lines[0]), ' ', lines[1] || '',
    detail ? h('span', { class: 'server-says' }, 'Server: ', h('code', null, detail)) : null);
  els.msg.dataset.kind = kind;
  els.msg.hidden = false;
}

function showLogin() {
  signedIn = false;
  stopPolling();
  active = null;
  for (const v of views) v.el.hidden = true;
  els.nav.hidden = true;
  els.logout.hidden = true;
  els.login.hidden = false;
  setConn('idle', 'Signed out');
  els.input.value = '';
  els.input.focus();
}

function enter() {
  signedIn = true;
  els.login.hidden = true;
  els.msg.hidden = true;
  els.nav.hidden = false;
  els.logout.hidden = false;
  active = null;
  show(route());
}

onAuthFailure((err) => {
  const wasIn = signedIn;
  showLogin();
  loginMessage(err.kind === 'unauthorized' && wasIn ? 'expired' : err.kind, err.serverMessage);
});

els.form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const candidate = els.input.value.trim();
  if (!candidate) {
    loginMessage('Enter the token first.');
    return;
  }
  const button = els.form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    await request('ping', { candidate });
    token.set(candidate);
    els.input.value = '';
    enter();
  } catch (err) {
    if (err instanceof AuthError) loginMessage(err.kind, err.serverMessage);
    else loginMessage('Sign-in failed: ' + err.message);
    els.input.value = '';
    els.input.focus();
  } finally {
    button.disabled = false;
  }
});

els.logout.addEventListener('click', () => {
  token.clear();
  showLogin();
  els.msg.hidden = true;
});

// ---- start ------------------------------------------------------------------------------

for (const v of views) {
  v.mount(app);
  v.el.hidden = true;
  els.main.appendChild(v.el);
  els.nav.querySelector('ul').appendChild(
    h('li', null, h('a', { href: '#/' + v.id, dataset: { view: v.id } }, v.title)));
}

// The server's identity shows before sign-in too: /status/json is public.
getStatus().then((doc) => app.status(doc)).catch(() => {});

if (token.get()) {
  request('ping').then(enter).catch((err) => {
    if (!(err instanceof AuthError)) {
      showLogin();
      loginMessage('Cannot check the saved token: ' + err.message);
    }
  });
} else {
  showLogin();
}
