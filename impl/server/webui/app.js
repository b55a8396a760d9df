// soundgate's approvers' page (docs/approvers.md): sign in with a token, see the
// inbox live, approve or reject with a reason. Plain JavaScript, no framework, and
// nothing fetched but from the gate itself. Everything an agent wrote reaches the
// document as text (textContent) in the escaped form the gate sends (`shown`: its
// ids Go-quoted as soon as they hold a space, a control character, an escape
// sequence or anything invisible), never as markup.
'use strict';

(() => {
  const CSRF_HEADER = 'X-Soundgate-Csrf';
  const CSRF_KEY = 'soundgate-csrf'; // sessionStorage: this origin's (port included), this tab's
  const PAGE_LIMIT = 1000; // approvals per pending request (the protocol's most)
  const PAGES_MAX = 20; // pages listed at most; the oldest approvals come first
  const RECENT_MAX = 20; // closed approvals kept in view
  const RETRY_MS = [500, 1000, 2000, 5000, 10000];
  const CLOSED = {
    approved: 'approved', rejected: 'rejected', cancelled: 'cancelled (the run was cancelled)',
    fenced: 'fenced (the run moved to a new epoch)', timed_out: 'timed out (the run\u2019s deadline passed)',
  };

  const state = {
    csrf: sessionStorage.getItem(CSRF_KEY),
    me: null,
    items: new Map(), // pending approvals by [run, key]: {a, seenAt, el, ageEl, resultEl}
    buffer: null, // events that came while the inbox was being listed
    listing: 0, // the generation of the latest listing
    stream: null, // the AbortController of the event stream
    timer: 0,
    retry: 0,
    truncated: false,
  };

  const $ = (id) => document.getElementById(id);
  const itemKey = (run, key) => JSON.stringify([run, key]);

  function make(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function labeled(label, text, className) {
    const span = make('span', className);
    span.append(make('span', 'label', label), make('span', 'value', text));
    return span;
  }

  function setStatus(text) { $('status').textContent = text; }

  class ApiError extends Error {
    constructor(status, type, message) { super(message); this.status = status; this.type = type; }
  }

  // api calls the gate's page API: a GET without body, else a POST of JSON. Every
  // call carries the session's CSRF token; the cookie goes by itself.
  async function api(path, body) {
    const init = { method: body === undefined ? 'GET' : 'POST', headers: {}, credentials: 'same-origin', cache: 'no-store', redirect: 'error' };
    if (state.csrf) init.headers[CSRF_HEADER] = state.csrf;
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    let data = null;
    try { data = await resp.json(); } catch { /* not JSON: the status says it */ }
    if (!resp.ok) {
      const e = (data && data.error) || {};
      throw new ApiError(resp.status, e.type || 'http', e.message || `HTTP ${resp.status}`);
    }
    return data;
  }

  // --- signing in and out

  async function signIn(ev) {
    ev.preventDefault();
    const input = $('token');
    const token = input.value;
    input.value = '';
    $('signin-error').textContent = '';
    try {
      startSession(await api('/api/signin', { token }));
    } catch (e) {
      $('signin-error').textContent = `Refused: ${e.message}`;
    }
  }

  async function signOut() {
    try { await api('/api/signout', {}); } catch { /* ended already */ }
    signedOut('Signed out.');
  }

  function startSession(me) {
    state.me = me;
    state.csrf = me.csrf;
    sessionStorage.setItem(CSRF_KEY, me.csrf);
    $('who-name').textContent = `${me.name} (${me.role})`;
    $('who').hidden = false;
    $('signin').hidden = true;
    $('inbox').hidden = false;
    state.items.clear();
    $('approvals').replaceChildren();
    $('recent').replaceChildren();
    render();
    connect();
  }

  function signedOut(message) {
    stopStream();
    state.me = null;
    state.csrf = null;
    sessionStorage.removeItem(CSRF_KEY);
    state.items.clear();
    state.buffer = null;
    $('approvals').replaceChildren();
    $('who').hidden = true;
    $('inbox').hidden = true;
    $('signin').hidden = false;
    $('signin-error').textContent = message || '';
    $('token').focus();
  }

  // --- the live inbox: an event stream read with fetch (EventSource sends no header)

  function stopStream() {
    clearTimeout(state.timer);
    if (state.stream) state.stream.abort();
    state.stream = null;
  }

  async function connect() {
    stopStream();
    const ctl = new AbortController();
    state.stream = ctl;
    setStatus('Connecting\u2026');
    let resp;
    try {
      resp = await fetch('/api/events', {
        headers: { [CSRF_HEADER]: state.csrf, Accept: 'text/event-stream' },
        credentials: 'same-origin', cache: 'no-store', redirect: 'error', signal: ctl.signal,
      });
    } catch {
      if (!ctl.signal.aborted) reconnect(ctl, 'The gate cannot be reached');
      return;
    }
    if (resp.status === 401) {
      let why = '';
      try { why = (await resp.json()).error.message; } catch { /* none */ }
      signedOut(why);
      return;
    }
    if (!resp.ok) {
      reconnect(ctl, `The gate refused the stream (HTTP ${resp.status})`);
      return;
    }
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (!dispatch(ctl, block)) return;
        }
      }
    } catch { /* aborted or broken: below */ }
    if (!ctl.signal.aborted) reconnect(ctl, 'The stream ended');
  }

  function reconnect(ctl, why) {
    if (state.stream !== ctl || !state.me) return;
    state.stream = null;
    const ms = RETRY_MS[Math.min(state.retry++, RETRY_MS.length - 1)];
    setStatus(`${why}; trying again in ${ms / 1000} s\u2026`);
    state.timer = setTimeout(connect, ms);
  }

  // dispatch handles one event of the stream; false: the stream is over.
  function dispatch(ctl, block) {
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue; // a comment: the heartbeat
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      let value = c < 0 ? '' : line.slice(c + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data += (data ? '\n' : '') + value;
    }
    if (data === '') return true;
    let d;
    try { d = JSON.parse(data); } catch { return true; }
    switch (event) {
      case 'ready':
        state.retry = 0;
        setStatus('Live.');
        list();
        break;
      case 'resync':
        list();
        break;
      case 'inbox':
        if (state.buffer) state.buffer.push(d);
        else { apply(d); render(); }
        break;
      case 'end':
        if (d.session_ended) { ctl.abort(); signedOut(d.why); return false; }
        reconnect(ctl, d.why || 'The stream ended');
        ctl.abort();
        return false;
    }
    return true;
  }

  // list reads the inbox anew and then applies the events that came meanwhile, in
  // their order: an approval ends up as the last word about it says.
  async function list() {
    const gen = ++state.listing;
    state.buffer = [];
    const listed = new Map();
    let cursor = '';
    let more = false;
    try {
      for (let page = 0; page < PAGES_MAX; page++) {
        const params = { limit: PAGE_LIMIT };
        if (cursor) params.cursor = cursor;
        const res = (await api('/api/pending', params)).result;
        if (gen !== state.listing) return;
        const now = Date.now();
        for (const a of res.approvals) listed.set(itemKey(a.run, a.key), { a, seenAt: a.since_ms ? now - a.age_ms : null });
        more = res.more;
        cursor = res.cursor || '';
        if (!more) break;
      }
    } catch (e) {
      if (gen !== state.listing) return;
      state.buffer = null;
      if (e.status === 401) { signedOut(e.message); return; }
      setStatus(`The inbox could not be read: ${e.message}`);
      return;
    }
    for (const k of listed.keys()) {
      const old = state.items.get(k);
      if (old) listed.set(k, old); // keep its row, and the reason typed into it
    }
    state.items = listed;
    const buffered = state.buffer;
    state.buffer = null;
    for (const ev of buffered) apply(ev);
    state.truncated = more;
    render();
  }

  function apply(ev) {
    const k = itemKey(ev.run, ev.key);
    if (ev.kind === 'pending') {
      if (!state.items.has(k)) {
        const a = { run: ev.run, key: ev.key, since_ms: ev.since_ms, description: ev.description, args_digest: ev.args_digest, shown: ev.shown };
        state.items.set(k, { a, seenAt: ev.since_ms ? Date.now() - Math.max(0, ev.at_ms - ev.since_ms) : null });
      }
      return;
    }
    state.items.delete(k);
    const li = make('li');
    li.append(make('span', 'id', ev.shown.run), ' ', make('span', 'id', ev.shown.key), ` ${CLOSED[ev.kind] || ev.kind}`);
    if (ev.shown.reason) li.append(`: ${ev.shown.reason}`);
    li.dataset.kind = ev.kind;
    li.dataset.key = ev.key;
    const recent = $('recent');
    recent.prepend(li);
    while (recent.children.length > RECENT_MAX) recent.lastElementChild.remove();
  }

  // --- drawing

  function fmtAge(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return `${s}s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
    const h = Math.floor(m / 60);
    if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
    return `${Math.floor(h / 24)}d ${h % 24}h`;
  }

  function tick() {
    const now = Date.now();
    for (const it of state.items.values()) {
      if (it.ageEl) it.ageEl.textContent = it.seenAt === null ? 'age unknown' : `pending ${fmtAge(now - it.seenAt)}`;
    }
  }

  function row(it) {
    const a = it.a;
    const li = make('li', 'approval');
    li.dataset.run = a.run;
    li.dataset.key = a.key;
    const head = make('div', 'head');
    it.ageEl = make('span', 'age');
    head.append(labeled('run', a.shown.run, 'id run'), labeled('key', a.shown.key, 'id key'), it.ageEl);
    li.append(head);
    if (a.description) li.append(make('p', 'description', a.shown.description));
    if (a.args_digest) li.append(labeled('args', a.args_digest, 'digest'));
    if (state.me && state.me.role === 'approver') {
      const form = make('form');
      const reason = make('input', 'reason');
      reason.type = 'text';
      reason.placeholder = 'Reason (optional)';
      reason.maxLength = 512;
      reason.setAttribute('aria-label', 'Reason');
      const approve = make('button', 'approve', 'Approve');
      const reject = make('button', 'reject', 'Reject');
      approve.type = reject.type = 'button';
      approve.addEventListener('click', () => decide(it, 'approve', reason.value, form));
      reject.addEventListener('click', () => decide(it, 'reject', reason.value, form));
      form.addEventListener('submit', (e) => e.preventDefault());
      form.append(reason, approve, reject);
      li.append(form);
    }
    it.resultEl = make('p', 'result');
    li.append(it.resultEl);
    return li;
  }

  function byInboxOrder(x, y) {
    const a = x.a;
    const b = y.a;
    return (a.since_ms || 0) - (b.since_ms || 0) || (a.run < b.run ? -1 : a.run > b.run ? 1 : 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  }

  function render() {
    const list = $('approvals');
    const items = [...state.items.values()].sort(byInboxOrder);
    const keep = new Set();
    for (const it of items) {
      if (!it.el) it.el = row(it);
      keep.add(it.el);
      list.append(it.el); // moves a row that is there already: in order, its input kept
    }
    for (const li of [...list.children]) if (!keep.has(li)) li.remove();
    $('empty').hidden = items.length > 0;
    $('count').textContent = `(${items.length}${state.truncated ? '+' : ''})`;
    tick();
  }

  async function decide(it, decision, reason, form) {
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    it.el.classList.add('deciding');
    it.resultEl.classList.remove('error');
    it.resultEl.textContent = '';
    const params = { run: it.a.run, key: it.a.key, decision };
    if (reason) params.reason = reason;
    try {
      const res = (await api('/api/decide', params)).result;
      it.resultEl.textContent = `${res.decision === 'approve' ? 'Approved' : 'Rejected'}${res.repeat ? ' (it was already)' : ''}.`;
    } catch (e) {
      if (e.status === 401) { signedOut(e.message); return; }
      it.el.classList.remove('deciding');
      it.resultEl.classList.add('error');
      it.resultEl.textContent = `Refused: ${e.message}`;
      for (const b of form.querySelectorAll('button')) b.disabled = false;
    }
  }

  // --- start

  $('signin-form').addEventListener('submit', signIn);
  $('signout').addEventListener('click', signOut);
  window.addEventListener('pagehide', stopStream);
  setInterval(tick, 1000);
  if (state.csrf) api('/api/session').then(startSession, () => signedOut(''));
  else signedOut('');
})();
