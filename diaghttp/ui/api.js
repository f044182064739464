// The debug API client. The token lives in this tab's sessionStorage (it
// goes when the tab closes) and is sent as "Authorization: Bearer" on every
// /debug/api/* request and on /status/json (which needs it when [http]
// protect-metrics is on), and on nothing else.

const KEY = 'svcdb.debug.token';

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// AuthError is a 401 (kind "unauthorized") or a 403 (kind "forbidden": no
// token configured on the server). The app shows the sign-in form for both.
export class AuthError extends Error {
  constructor(kind, status, serverMessage) {
    super(kind === 'forbidden' ? 'the server has no HTTP token configured' : 'the token was not accepted');
    this.kind = kind;
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

// ApiError is any other failure: an HTTP error status, or the server could
// not be reached (status 0).
export class ApiError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

let authFailed = () => {};

// onAuthFailure registers the app's handler for 401 and 403.
export function onAuthFailure(fn) {
  authFailed = fn;
}

async function errorText(res) {
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') return body.error;
  } catch { /* not JSON */ }
  return res.statusText || 'HTTP ' + res.status;
}

// request GETs /debug/api/<path> with the token (or with candidate, to check
// a token before keeping it). It resolves with the Response for 2xx and
// rejects with AuthError or ApiError otherwise.
export async function request(path, { signal, candidate } = {}) {
  const t = candidate ?? token.get();
  let res;
  try {
    res = await fetch('api/' + path, {
      headers: { Authorization: 'Bearer ' + t, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    if (e instanceof TypeError && /header|ISO-8859-1|code point/i.test(e.message)) {
      throw new ApiError(0, 'the token contains characters that cannot be sent in an HTTP header');
    }
    throw new ApiError(0, 'cannot reach the server (' + e.message + ')');
  }
  if (res.ok) return res;
  const msg = await errorText(res);
  if (res.status === 401 || res.status === 403) {
    const err = new AuthError(res.status === 401 ? 'unauthorized' : 'forbidden', res.status, msg);
    if (candidate == null) {
      token.clear();
      authFailed(err);
    }
    throw err;
  }
  throw new ApiError(res.status, msg + ' (HTTP ' + res.status + ')', res.headers.get('Retry-After'));
}

export async function getJSON(path, opts) {
  return (await request(path, opts)).json();
}

// getStatus reads the status document (/status/json). It is public unless
// [http] protect-metrics is on; the token is sent when there is one.
export async function getStatus({ signal } = {}) {
  const t = token.get();
  let res;
  try {
    res = await fetch('../status/json', {
      headers: t ? { Authorization: 'Bearer ' + t } : {},
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'cannot reach the server (' + e.message + ')');
  }
  if (!res.ok) throw new ApiError(res.status, (await errorText(res)) + ' (HTTP ' + res.status + ')');
  return res.json();
}

// saveBlob hands a downloaded file to the browser under name.
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
