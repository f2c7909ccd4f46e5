// app.js runs the inbox: it loads the asks, keeps them live over the event
// stream, and renders the session list, the pending cards and Recent.
import { h, clock, micros, relTime, tick } from './dom.js';
import { buildCard, refreshCard, showSettled, summary, outcome } from './cards.js';
import { diffView, pretty } from './approval.js';

const $ = id => document.getElementById(id);

// A session belongs to the agent token that names it: two agents' sessions
// of one name are two sessions. key names one (names hold no newline).
const key = (agent, name) => agent || name ? `${agent}\n${name}` : '';
const keyOf = a => key(a.agent, a.session);
function scopeOf(search) {
  const q = new URLSearchParams(search);
  return q.get('session') ? key(q.get('agent') || '', q.get('session')) : '';
}
function scopeQuery(k) {
  const [agent, name] = k.split('\n');
  return `agent=${encodeURIComponent(agent)}&session=${encodeURIComponent(name)}`;
}

const S = {
  asks: new Map(),      // id → ask, the newest state seen
  sessions: new Map(),  // key → {agent, name} of every session seen
  cards: new Map(),     // id → card element of a pending (or held) ask
  held: new Set(),      // settled asks whose card stays until the person clicks OK
  previews: new Map(),  // id → Promise of the ask's previews
  me: '',
  selected: scopeOf(location.search),
  lastEventId: Number(document.querySelector('meta[name="askd-cursor"]').content) || 0,
  loadedScopes: new Set(),
  quickFirst: true,
};

async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    return { ok: false, status: 0, data: { error: `Cannot reach askd: ${e.message}` } };
  }
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401) location.assign('/signin.html');
  return { ok: res.ok, status: res.status, data };
}

// upsert records a state of an ask unless a newer one is already known.
function upsert(a) {
  const old = S.asks.get(a.id);
  if (old && micros(old.updated_at) > micros(a.updated_at)) return;
  S.asks.set(a.id, a);
  if (!S.sessions.has(keyOf(a))) S.sessions.set(keyOf(a), { agent: a.agent, name: a.session });
  if (old && old.status === 'pending' && a.status !== 'pending') {
    const card = S.cards.get(a.id);
    // Someone else settled an ask this person was working on: keep the card
    // and say who did, rather than pulling it away mid-answer.
    if (card && card._st.dirty && !card._st.mine && !card._st.inflight) {
      S.held.add(a.id);
      showSettled(card._st, a);
    }
  }
  schedule();
}

// details returns a Promise of the HTML of an ask's details, rendered from
// Markdown and sanitized on the server, or of null. Cards ask for them as
// they are built; one request fetches those of many.
const details = {
  cache: new Map(), // "id@revision" → Promise
  queue: [],
  get(id, revision) {
    const k = `${id}@${revision}`;
    if (!this.cache.has(k)) {
      this.cache.set(k, new Promise(resolve => {
        if (!this.queue.length) setTimeout(() => this.flush(), 0);
        this.queue.push({ id, revision, resolve });
      }));
    }
    return this.cache.get(k);
  },
  async flush() {
    const all = this.queue.splice(0);
    for (let i = 0; i < all.length; i += 50) {
      const batch = all.slice(i, i + 50);
      const r = await api('GET', '/inbox/details?' + batch.map(b => `id=${b.id}`).join('&'));
      const got = new Map(r.ok ? r.data.details.map(d => [d.id, d]) : []);
      for (const b of batch) {
        const d = got.get(b.id);
        b.resolve(d && d.revision === b.revision ? d.html : null);
      }
    }
  },
};

const ctx = {
  api,
  upsert,
  hold: id => { S.held.add(id); },
  release: id => { S.held.delete(id); schedule(); },
  previews: id => {
    if (!S.previews.has(id)) {
      S.previews.set(id, api('GET', `/inbox/previews/${id}`).then(r => (r.ok ? r.data : null)));
    }
    return S.previews.get(id);
  },
  details: (id, revision) => details.get(id, revision),
};

// schedule renders soon, once for a burst of changes. A timer, not
// requestAnimationFrame: a hidden tab must still update its title.
let queued = false;
function schedule() {
  if (queued) return;
  queued = true;
  setTimeout(() => { queued = false; render(); }, 15);
}

const snoozed = (a, now) => a.snoozed_until && Date.parse(a.snoozed_until) > now;
const inScope = a => !S.selected || keyOf(a) === S.selected;

// reconcile makes parent's children exactly els, in order, moving only what
// must move (so a card being typed in keeps its focus and text).
function reconcile(parent, els) {
  if (!parent.firstChild) { parent.append(...els); return; }
  let node = parent.firstChild;
  for (const el of els) {
    if (el === node) node = node.nextSibling;
    else parent.insertBefore(el, node);
  }
  while (node) { const next = node.nextSibling; node.remove(); node = next; }
}

// fresh reports whether a's card exists and shows its current content.
function fresh(a) {
  const card = S.cards.get(a.id);
  return card && (card._st.settled || (card._st.ask.revision === a.revision && card._st.ask.kind === a.kind));
}

function cardFor(a) {
  let card = S.cards.get(a.id);
  if (!fresh(a)) {
    card = buildCard(a, ctx);
    if (S.started) card.classList.add('arrived');
    if (a.status !== 'pending') showSettled(card._st, a);
    S.cards.set(a.id, card);
  } else if (a.status === 'pending') {
    refreshCard(card, a);
  }
  return card;
}

// byUrgency orders pending asks: those with a deadline (questions,
// permission prompts) first, the soonest first (of two due at once, the
// older); then the rest (approvals, attention asks) newest first.
function byUrgency(list) {
  const due = a => (a.deadline ? micros(a.deadline) : Infinity);
  return list.map(a => [due(a), a])
    .sort(([dx, x], [dy, y]) => (dx !== dy ? dx - dy : dx === Infinity ? y.id - x.id : x.id - y.id))
    .map(([, a]) => a);
}

let nextWake = 0;
function render() {
  const t0 = performance.now();
  const now = clock.now();
  const all = [...S.asks.values()];
  const counts = new Map();
  let total = 0;
  const sleeping = [];
  for (const a of all) {
    if (a.status !== 'pending') continue;
    if (snoozed(a, now)) { if (inScope(a)) sleeping.push(a); continue; }
    counts.set(keyOf(a), (counts.get(keyOf(a)) || 0) + 1);
    total++;
  }

  const pending = byUrgency(all.filter(a => inScope(a) && ((a.status === 'pending' && !snoozed(a, now)) || S.held.has(a.id))));
  const keep = new Set(pending.map(a => a.id));
  for (const id of S.cards.keys()) if (!keep.has(id)) S.cards.delete(id);
  // The first render builds cards for a few milliseconds only, most
  // urgent first, so the top of a long inbox shows at once; the next render (a
  // moment later, after a paint) builds the rest in one go, because every
  // pass over a thousand cards costs a full style recalculation.
  const els = [];
  let more = false;
  for (const a of pending) {
    if (S.quickFirst && !fresh(a) && performance.now() - t0 > 12) { more = true; continue; }
    els.push(cardFor(a));
  }
  S.quickFirst = false;
  reconcile($('pending'), els);
  if (more) schedule();
  else if (S.loaded) S.started = true; // from now on, new cards arrive visibly
  const inView = pending.filter(a => a.status === 'pending').length;
  $('pending-count').textContent = inView ? String(inView) : '';
  $('empty').hidden = pending.length > 0;

  renderSnoozed(sleeping);
  renderRecent(all.filter(a => a.status !== 'pending' && inScope(a) && !S.held.has(a.id)));
  renderSessions(counts, total);
  document.title = total ? `(${total}) askd inbox` : 'askd inbox';

  // Wake when the next snooze ends.
  const wake = Math.min(...sleeping.map(a => Date.parse(a.snoozed_until)));
  if (isFinite(wake) && wake !== nextWake) {
    nextWake = wake;
    setTimeout(schedule, Math.min(wake - now + 50, 2 ** 31 - 1));
  }
  performance.measure('askd-render', { start: t0 });
}

function renderSnoozed(list) {
  const box = $('snoozed');
  box.hidden = list.length === 0;
  box.querySelector('.count').textContent = String(list.length);
  box.querySelector('ul').replaceChildren(...list.sort((x, y) => y.id - x.id).map(a =>
    h('li', null, h('span', { class: 'summary' }, summary(a)), ' ',
      h('span', { class: 'muted' }, `${a.session} · until ${new Date(a.snoozed_until).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' })}`))));
}

const recentItems = new Map(); // "id@updated_at" → element

function renderRecent(list) {
  list.sort((x, y) => micros(y.settled_at) - micros(x.settled_at));
  list = list.slice(0, 50);
  const els = list.map(a => {
    const key = `${a.id}@${a.updated_at}`;
    let el = recentItems.get(key);
    if (!el) {
      const o = outcome(a);
      el = h('li', { class: 'recent-item', 'data-id': a.id },
        h('span', { class: `chip status status-${o.how.replace(' ', '-')}` }, o.how),
        h('div', { class: 'recent-main' },
          h('div', { class: 'recent-summary' }, summary(a)),
          h('div', { class: 'recent-outcome' },
            o.who ? h('span', { class: 'who' }, `by ${o.who}`) : null,
            o.what ? h('span', { class: 'what' }, o.what) : null),
          edits(a)),
        h('div', { class: 'recent-side' },
          h('span', { class: 'session' }, a.session),
          h('time', { class: 'rel', datetime: a.settled_at }, relTime(a.settled_at))));
      recentItems.set(key, el);
    }
    return el;
  });
  const live = new Set(els);
  for (const [k, el] of recentItems) if (!live.has(el)) recentItems.delete(k);
  reconcile($('recent'), els);
  $('recent-empty').hidden = els.length > 0;
}

// edits shows, folded, how a person changed an approval's payload.
function edits(a) {
  const ans = a.answer;
  if (a.kind !== 'approval' || !ans || ans.decision !== 'modified' || a.payload == null || ans.payload == null) return null;
  const diff = diffView(pretty(a.payload), pretty(ans.payload));
  return diff && h('details', { class: 'recent-edits' }, h('summary', null, 'Edits'), diff);
}

function renderSessions(counts, total) {
  const keys = [...S.sessions.keys()].sort((x, y) => (counts.get(y) || 0) - (counts.get(x) || 0) || x.localeCompare(y));
  if (S.selected && !S.sessions.has(S.selected)) keys.unshift(S.selected);
  const link = (k, label, n) => {
    const [agent, name] = k ? k.split('\n') : ['', ''];
    return h('a', {
      class: 'session-link' + (k === S.selected ? ' active' : ''),
      href: k ? `?${scopeQuery(k)}` : location.pathname,
      'aria-current': k === S.selected ? 'page' : null,
      'data-session': name,
      'data-agent': agent,
      title: k ? `Session ${name} of agent ${agent}` : null,
      onclick: e => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        select(k);
      },
    }, h('span', { class: 'session-name' }, label),
    // The agent whose session it is, unless the name says it (its default).
    agent && agent !== name ? h('span', { class: 'session-agent' }, agent) : null,
    n ? h('span', { class: 'badge-count' }, String(n)) : null);
  };
  $('sessions').replaceChildren(
    h('div', { class: 'nav-h' }, 'Sessions'),
    link('', 'All sessions', total),
    ...keys.map(k => link(k, k.split('\n')[1], counts.get(k) || 0)));
}

async function select(k) {
  if (k === S.selected) return;
  S.selected = k;
  history.pushState(null, '', k ? `?${scopeQuery(k)}` : location.pathname);
  schedule();
  await loadScope(k);
}

// loadScope loads one session's asks, so its Recent list is complete too
// (the unscoped list holds every pending ask but only the latest settled).
async function loadScope(k) {
  if (!k || S.loadedScopes.has(k)) return;
  S.loadedScopes.add(k);
  const r = await api('GET', `/api/asks?${scopeQuery(k)}`);
  if (r.ok) r.data.asks.forEach(upsert);
}

window.addEventListener('popstate', () => {
  S.selected = scopeOf(location.search);
  loadScope(S.selected);
  schedule();
});

// Live updates. EventSource reconnects by itself and sends Last-Event-ID;
// if it gives up (the server said no), we start again after a pause.
let es;
function connect() {
  const live = $('live');
  es = new EventSource(`/api/events?last_event_id=${S.lastEventId}`);
  es.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
  es.onerror = () => {
    live.textContent = 'reconnecting…';
    live.className = 'live off';
    if (es.readyState === EventSource.CLOSED) {
      setTimeout(async () => {
        const me = await api('GET', '/api/me');
        if (me.status !== 401) connect();
      }, 2000);
    }
  };
  for (const type of ['ask.created', 'ask.updated', 'ask.settled', 'ask.told']) {
    es.addEventListener(type, ev => {
      const id = Number(ev.lastEventId);
      if (id > S.lastEventId) S.lastEventId = id;
      let e;
      try { e = JSON.parse(ev.data); } catch { return; }
      if (!e.ask) return;
      const fresh = !S.asks.has(e.ask.id);
      upsert(e.ask);
      if (type === 'ask.created' && fresh && e.ask.status === 'pending') notify(e.ask);
    });
  }
}

function notify(a) {
  if (!document.hidden || !('Notification' in window) || Notification.permission !== 'granted') return;
  const n = new Notification(`askd · ${a.session}`, { body: summary(a), tag: `askd-${a.id}` });
  n.onclick = () => { window.focus(); n.close(); };
}

function setupNotifications() {
  const btn = $('notify');
  if (!('Notification' in window) || Notification.permission !== 'default') return;
  btn.hidden = false;
  btn.addEventListener('click', async () => {
    await Notification.requestPermission();
    btn.hidden = true;
  });
}

// Keyboard: j/k move between cards, 1–9 press the button or option showing
// that digit on the focused card, Ctrl/Cmd+Enter submits what the card has
// (its answers, its open pane's action), Escape closes its open pane.
document.addEventListener('keydown', e => {
  const t = e.target;
  const current = t instanceof Element ? t.closest('#pending .card') : null;
  if (current && e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.altKey && !e.isComposing) {
    e.preventDefault();
    current._st.submitFrom(t);
    return;
  }
  if (current && e.key === 'Escape') {
    current._st.escape();
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) && t.type !== 'checkbox')) return;
  const cards = [...document.querySelectorAll('#pending .card')];
  if (e.key === 'j' || e.key === 'k') {
    if (!cards.length) return;
    let i = cards.indexOf(current);
    i = i < 0 ? 0 : Math.max(0, Math.min(cards.length - 1, i + (e.key === 'j' ? 1 : -1)));
    cards[i].focus();
    cards[i].scrollIntoView({ block: 'nearest' });
    e.preventDefault();
  } else if (/^[1-9]$/.test(e.key) && current) {
    // Only what is on offer: not a button of a hidden row (Approve while
    // the payload is being edited), nor one of a card being sent.
    const opt = [...current.querySelectorAll(`[data-key="${e.key}"]`)]
      .find(el => !el.closest('[hidden]') && !el.matches(':disabled') && !el.closest('fieldset:disabled'));
    if (!opt) return;
    const box = opt.querySelector('input[type=checkbox]');
    (box || opt).click();
    e.preventDefault();
  }
});

// Relative times age in place.
setInterval(() => {
  const now = clock.now();
  for (const t of document.querySelectorAll('time.rel')) t.textContent = relTime(t.getAttribute('datetime'), now);
}, 30000);

// Countdowns count down, and mark their card when its time is nearly up.
const countdowns = document.getElementsByClassName('countdown'); // live
function tickAll(force = false) {
  const now = clock.now();
  for (const el of countdowns) {
    const due = tick(el, now, force);
    const card = el._card || (el._card = el.closest('.card'));
    if (card.classList.contains('due') !== due) card.classList.toggle('due', due);
  }
}
setInterval(() => tickAll(), 1000);

// askdClock moves the page's clock, for tests: set(ms) makes now ms since
// the epoch (and time runs on from there); now() reads it.
window.askdClock = {
  set(ms) { clock.offset = ms - Date.now(); tickAll(true); schedule(); },
  now: () => clock.now(),
};

async function start() {
  const [me, list, sessions] = await Promise.all([api('GET', '/api/me'), api('GET', '/api/asks'), api('GET', '/api/sessions')]);
  if (me.ok) $('me').textContent = me.data.name;
  if (sessions.ok) for (const s of sessions.data.sessions) S.sessions.set(key(s.agent, s.name), { agent: s.agent, name: s.name });
  if (list.ok) list.data.asks.forEach(upsert);
  await loadScope(S.selected);
  S.loaded = true;
  render();
  document.body.classList.add('ready');
  connect();
  setupNotifications();
}

start();
