// app.js runs the inbox: it loads the most urgent page of pending asks, and
// more as the person scrolls; keeps them live over the event stream; renders
// the session list (a page at a time too), the pending cards and Recent; and
// switches between the inbox and the History, Rules and Settings views,
// which are kept in the URL with the chosen session. The inbox shows Mine
// (asks routed to the person, a team of theirs or nobody, or escalated to
// them: SPEC §10) or All, as the person last chose; the tab's title and
// notifications follow Mine either way.
import { h, clock, micros, relTime, tick, tickWaited } from './dom.js';
import { api, pager, nearView, details } from './api.js';
import { buildCard, refreshCard, showSettled, summary, answerWithRule } from './cards.js';
import { approving } from './approval.js';
import { settledRow, setupHistory, openHistory, historySettled, FILTERS } from './history.js';
import { openRules } from './rules.js';
import { openSettings } from './settings.js';
import { setMe, mineOf, listedMine } from './mine.js';
import { Inboxes } from './inboxes.js';
import { renderSessions } from './sessions.js';
import { follow, notify, setupNotifications } from './stream.js';
import { setupKeys } from './keys.js';

const PAGE = 50;   // pending asks or sessions a page
const RECENT = 20; // settled asks in Recent (History has them all)

const $ = id => document.getElementById(id);

// A session belongs to the agent token that names it: two agents' sessions
// of one name are two sessions. key names one (names hold no newline).
const key = (agent, name) => agent || name ? `${agent}\n${name}` : '';
const keyOf = a => key(a.agent, a.session);
const scopeQuery = k => {
  const [agent, name] = k.split('\n');
  return `agent=${encodeURIComponent(agent)}&session=${encodeURIComponent(name)}`;
};

// readURL is what the URL says to show: the view ('' the inbox, 'history',
// 'rules', 'settings'), the chosen session, and the History view's filters.
const VIEWS = ['history', 'rules', 'settings'];
function readURL(search) {
  const q = new URLSearchParams(search);
  const filters = {};
  for (const k of FILTERS) filters[k] = q.get(k) || '';
  const view = q.get('view');
  return {
    view: VIEWS.includes(view) ? view : '',
    scope: q.get('session') ? key(q.get('agent') || '', q.get('session')) : '',
    filters,
  };
}

// urlFor is the URL of a view of a session (or of all), with the History
// view's filters; an agent alone filters History only.
function urlFor(view, scope, filters) {
  const q = new URLSearchParams();
  if (view) q.set('view', view);
  if (scope) {
    const [agent, name] = scope.split('\n');
    q.set('agent', agent);
    q.set('session', name);
  } else if (view === 'history' && filters && filters.agent) {
    q.set('agent', filters.agent);
  }
  if (view === 'history' && filters) for (const k of ['q', 'kind', 'outcome', 'by']) if (filters[k]) q.set(k, filters[k]);
  const s = q.toString();
  return s ? `?${s}` : location.pathname;
}

const url = readURL(location.search);
const S = {
  asks: new Map(),      // id → ask, the newest state seen
  cards: new Map(),     // id → card element of a pending (or held) ask
  held: new Set(),      // settled asks whose card stays until the person clicks OK
  previews: new Map(),  // id → Promise of the ask's previews
  view: url.view,
  selected: url.scope,
  filters: url.filters,
  me: null,             // the person: {name, access} (GET /api/me)
  recents: new Map(),   // scope → Promise of its Recent's first load (Recent is everyone's)
  toNotify: new Map(),  // id → why: asks to raise a notification for, if still pending and Mine when rendered
  quickFirst: true,
};
// Mine and All: what the page knows of each, and which is shown.
const inboxes = new Inboxes({
  asks: S.asks,
  keyOf,
  key,
  scope: k => (k ? `&${scopeQuery(k)}` : ''),
  selected: () => S.selected,
  changed: () => schedule(),
});
const here = () => inboxes.shown;

// The actions after which an event's ask is newly settled.
const SETTLING = new Set(['answered', 'dismissed', 'timed_out', 'withdrawn', 'replaced']);

// changedAt is when a state of an ask was made, in microseconds: its
// updated_at, or its latest approval's time when later (an approval counted
// toward a quorum leaves updated_at as it was, for escalation's sake).
function changedAt(a) {
  const ap = a.approvals || [];
  return Math.max(micros(a.updated_at), ap.length ? micros(ap[ap.length - 1].at) : 0);
}

// upsert records a state of an ask unless a newer one is already known.
// src says where it came from: 'created' (the event of its creation),
// 'settled' (the event that settled it), 'escalated' (the event of its
// escalation), 'page' or '' (a list, a reply): the pending counts follow
// what each says.
function upsert(a, src = '') {
  const old = S.asks.get(a.id);
  if (old && changedAt(old) > changedAt(a)) return;
  S.asks.set(a.id, a);
  inboxes.tally(a, old, src);
  if (old && old.status === 'pending' && a.status !== 'pending') {
    const card = S.cards.get(a.id);
    // Someone else settled an ask this person was working on: keep the card
    // and say who did, rather than pulling it away mid-answer.
    if (card && card._st.dirty && !card._st.mine && !card._st.inflight) {
      S.held.add(a.id);
      showSettled(card._st, a);
    }
  }
  if (src === 'settled') historySettled(a);
  schedule();
}

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
  answerWithRule,
  // An approver makes rules only from asks routed to them, a team of
  // theirs or nobody; an admin from any.
  mayRule: a => ctx.access === 'admin' || mineOf(a) === true,
  me: '',      // the person's name, and their role: set from GET /api/me
  access: '',  // before any card is built
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
const isMine = a => mineOf(a) === true;

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
// An approver's approval card built before the page knew whether the ask
// is Mine offers no rules (they are for Mine); it is built again once that
// is known, unless the person has begun on it.
function fresh(a) {
  const card = S.cards.get(a.id);
  if (!card) return false;
  const st = card._st;
  if (st.settled) return true;
  // An edit under a quorum (SPEC §11) changes the payload at the same
  // revision: the others approve the edited one.
  const samePayload = JSON.stringify(approving(st.ask)) === JSON.stringify(approving(a));
  return st.ask.revision === a.revision && st.ask.kind === a.kind && samePayload && !(st.unsure && !st.dirty && mineOf(a) !== null);
}

function cardFor(a) {
  let card = S.cards.get(a.id);
  if (!fresh(a)) {
    card = buildCard(a, ctx);
    card._st.unsure = a.kind === 'approval' && ctx.access === 'approver' && mineOf(a) === null;
    if (S.started) card.classList.add('arrived');
    if (a.status !== 'pending') showSettled(card._st, a);
    S.cards.set(a.id, card);
  } else if (a.status === 'pending') {
    refreshCard(card, a);
  }
  return card;
}

// urgency orders pending asks as the server pages them: those with a
// deadline (questions, permission prompts) first, the soonest first (of two
// due at once, the older); then the rest (approvals, attention asks)
// newest first.
const due = a => (a.deadline ? micros(a.deadline) : Infinity);
function urgency(x, y, dx = due(x), dy = due(y)) {
  if (dx !== dy) return dx < dy ? -1 : 1;
  return dx === Infinity ? y.id - x.id : x.id - y.id;
}
function byUrgency(list) {
  return list.map(a => [due(a), a]).sort(([dx, x], [dy, y]) => urgency(x, y, dx, dy)).map(([, a]) => a);
}

// pendingList is the pager of box's pending asks of scope k. Its last is
// the last ask of the pages loaded: every pending ask of k up to it in
// urgency order is known (live ones too, from events), those after it are
// not yet.
function pendingList(box, k) {
  let l = box.lists.get(k);
  if (!l) {
    l = pager(`/api/asks?status=pending${box.q}${k ? `&${scopeQuery(k)}` : ''}`, PAGE, (data, p) => {
      for (const a of data.asks) {
        if (box.mine) listedMine(a); // the server says it is Mine
        upsert(a, 'page');
      }
      if (data.asks.length) p.last = data.asks.at(-1);
      if (p.total != null) box.counts.set(k, p.total);
      schedule();
    });
    l.last = null;
    box.lists.set(k, l);
  }
  return l;
}

// A new ask that sorts after the loaded part is not shown until the page
// holding it loads (it is then on that page): the list never has a gap.
// What all sessions' pages loaded is known of each session too; what All's
// loaded is known of Mine.
const within = (a, l) => l && l.loaded && (l.done || (l.last && urgency(a, l.last) <= 0));
const loadedIn = (box, a) => within(a, box.lists.get(S.selected)) || (S.selected !== '' && within(a, box.lists.get('')));
const shown = a => (here().mine ? isMine(a) && (loadedIn(here(), a) || loadedIn(inboxes.all, a)) : loadedIn(here(), a));

// afterPaint calls fn once the next frame has been painted (or soon, in a
// hidden tab, which paints none).
function afterPaint(fn) {
  let done = false;
  const once = () => { if (!done) { done = true; fn(); } };
  requestAnimationFrame(() => setTimeout(once));
  setTimeout(once, document.hidden ? 50 : 1000);
}

let nextWake = 0;
let building = false; // the last render left cards to build
function render() {
  if (!S.me) return; // cards are built for the person's role
  renderNav();
  const count = inboxes.counter(clock.now());
  if (S.view === '') renderInbox(count);
  const box = here();
  renderSessions({ sessions: box.sessions, selected: S.selected, sess: box.sess },
    { count: k => count(box, k), select, more: moreSessions, hrefFor: k => urlFor(S.view, k, null) });
  // The title and the Inbox link count Mine, whichever is shown.
  const mine = count(inboxes.mine, '');
  document.title = mine ? `(${mine}) askd inbox` : 'askd inbox';
  $('inbox-count').textContent = mine ? String(mine) : '';
  const n = count(box, S.selected);
  $('pending-count').textContent = n ? String(n) : '';
  for (const b of $('whose').querySelectorAll('button')) {
    const c = count(inboxes[b.dataset.whose], S.selected);
    b.setAttribute('aria-pressed', String(b.dataset.whose === inboxes.whose));
    b.dataset.count = c ? String(c) : ''; // drawn after the words (app.css)
  }
  for (const [id, why] of S.toNotify) {
    const a = S.asks.get(id);
    const mine = a && a.status === 'pending' ? mineOf(a) : false;
    if (mine === null) continue; // raised once the page knows
    S.toNotify.delete(id);
    if (mine) notify(a, why);
  }
}

function renderInbox(count) {
  const t0 = performance.now();
  const now = clock.now();
  const sleeping = [];
  const pending = [];
  for (const a of S.asks.values()) {
    if (!inScope(a)) continue;
    if (S.held.has(a.id)) { pending.push(a); continue; }
    if (a.status !== 'pending' || !shown(a)) continue;
    if (snoozed(a, now)) sleeping.push(a);
    else pending.push(a);
  }
  const sorted = byUrgency(pending);
  const keep = new Set(sorted.map(a => a.id));
  for (const id of S.cards.keys()) if (!keep.has(id)) S.cards.delete(id);
  // Until the first cards are painted, a render builds cards for a few
  // milliseconds only, most urgent first, so the top of the inbox shows at
  // once; the render after that paint builds the rest of the page in one
  // go, because every pass over many cards costs a full style recalculation.
  const els = [];
  let more = false;
  for (const a of sorted) {
    if (S.quickFirst && !fresh(a) && performance.now() - t0 > 12) { more = true; continue; }
    els.push(cardFor(a));
  }
  reconcile($('pending'), els);
  building = more;
  if (els.length && !S.painted) {
    S.painted = true;
    // Just after the frame that shows the first cards: the figure the
    // tests read, and the moment to build the rest.
    afterPaint(() => {
      performance.mark('askd-cards-painted');
      S.quickFirst = false;
      schedule();
    });
  }
  if (!more && S.loaded && !S.quickFirst && !S.started) {
    S.started = true; // from now on, new cards arrive visibly
    performance.mark('askd-cards-built');
  }
  const l = pendingList(here(), S.selected);
  $('empty').hidden = sorted.length > 0 || !l.done;
  // Mine empty while others' asks wait: say so, with All a click away.
  const others = here().mine ? (count(inboxes.all, S.selected) || 0) - (count(inboxes.mine, S.selected) || 0) : 0;
  $('empty').querySelector('.empty-text').textContent = others > 0
    ? `Nothing waiting for you. ${others === 1 ? '1 ask waits' : `${others} asks wait`} for others.`
    : 'Nothing waiting for you. New asks appear here as agents send them.';
  $('empty-all').hidden = others <= 0;
  const moreBox = $('pending-more');
  moreBox.hidden = l.done || !l.loaded;
  const btn = moreBox.querySelector('button');
  btn.textContent = l.loading ? 'Loading…' : l.error ? `Could not load more: ${l.error}. Try again` : 'Load more';
  btn.disabled = !!l.loading;

  renderSnoozed(sleeping);
  renderRecent([...S.asks.values()].filter(a => a.status !== 'pending' && inScope(a) && !S.held.has(a.id)));

  // Wake when the next snooze ends.
  const wake = Math.min(...sleeping.map(a => Date.parse(a.snoozed_until)));
  if (isFinite(wake) && wake !== nextWake) {
    nextWake = wake;
    setTimeout(schedule, Math.min(wake - now + 50, 2 ** 31 - 1));
  }
  performance.measure('askd-render', { start: t0 });
  requestAnimationFrame(() => morePending());
}

// morePending loads the next page of the chosen session's pending asks
// while the end of the list is near the screen.
function morePending(force = false) {
  if (S.view !== '' || building) return;
  const l = pendingList(here(), S.selected);
  if (l.done || l.loading || (l.error && !force) || !S.loaded) return;
  if (!force && !nearView($('pending-more'))) return;
  l.more().then(schedule);
  schedule();
}

function renderSnoozed(list) {
  const box = $('snoozed');
  box.hidden = list.length === 0;
  box.querySelector('.count').textContent = String(list.length);
  box.querySelector('ul').replaceChildren(...list.sort((x, y) => y.id - x.id).map(a =>
    h('li', null, h('span', { class: 'summary' }, summary(a)), ' ',
      h('span', { class: 'muted' }, `${a.session} · until ${new Date(a.snoozed_until).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' })}`))));
}

// A settled ask's row shows what cannot change once it is settled: it is
// kept as long as the ask is listed (an opened record stays open when, say,
// the agent is told).
const recentItems = new Map(); // "id@settled_at" → element

function renderRecent(list) {
  list.sort((x, y) => micros(y.settled_at) - micros(x.settled_at));
  const els = list.slice(0, RECENT).map(a => {
    const k = `${a.id}@${a.settled_at}`;
    let el = recentItems.get(k);
    if (!el) {
      el = settledRow(a, true);
      recentItems.set(k, el);
    }
    return el;
  });
  const live = new Set(els);
  for (const [k, el] of recentItems) if (!live.has(el)) recentItems.delete(k);
  reconcile($('recent'), els);
  $('recent-empty').hidden = els.length > 0;
}

// renderNav points the view links at the chosen session and marks the
// one shown.
function renderNav() {
  for (const a of document.querySelectorAll('#views .view-link')) {
    const v = a.dataset.view;
    const href = urlFor(v, S.selected, v === S.view ? S.filters : null);
    if (a.getAttribute('href') !== href) a.setAttribute('href', href);
    if (v === S.view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// go shows view of scope with the History filters, in the URL too (a new
// history entry, or with replace the same one: typing in a filter).
function go(view, scope, filters, replace = false) {
  S.view = view;
  S.selected = scope;
  S.filters = filters || {};
  const u = urlFor(view, scope, S.filters);
  if (u !== location.search && !(u === location.pathname && !location.search)) {
    history[replace ? 'replaceState' : 'pushState'](null, '', u);
  }
  return apply();
}

// apply shows what S says, loading what it needs, and returns a Promise of
// those loads.
function apply() {
  $('inbox-view').hidden = S.view !== '';
  $('history-view').hidden = S.view !== 'history';
  $('rules-view').hidden = S.view !== 'rules';
  $('settings-view').hidden = S.view !== 'settings';
  const loads = [];
  const box = here();
  const listing = S.view === '' ? pendingList(box, S.selected) : null;
  if (listing) {
    if (!listing.loaded) loads.push(listing.more());
    loads.push(recentOf(S.selected));
  } else if (S.view === 'history') {
    const [agent, session] = S.selected ? S.selected.split('\n') : [S.filters.agent || '', ''];
    openHistory({ ...S.filters, agent, session });
  } else if (S.view === 'rules') {
    const [agent, session] = S.selected ? S.selected.split('\n') : ['', ''];
    openRules(agent, session, { me: ctx.me, access: ctx.access });
  } else if (S.me) { // else start opens it, once it knows who the person is
    openSettings(S.me);
  }
  const sess = inboxes.sessionsOf(box);
  if (!sess.loaded) loads.push(sess.more());
  // The counts shown: Mine's and All's of the chosen session (beside the
  // switch), and Mine's of every session (the title). A list being loaded
  // brings its own.
  for (const b of inboxes.both) {
    for (const k of new Set([S.selected, b.mine ? '' : S.selected])) {
      if (!b.counts.has(k) && !(listing && b === box && k === S.selected)) loads.push(inboxes.countOf(b, k));
    }
  }
  schedule();
  return Promise.all(loads);
}

// setWhose shows Mine or All, and keeps the choice for next time.
function setWhose(w) {
  if (inboxes.choose(w)) apply();
}

// meIs takes in who the person is (GET /api/me): their name and role.
// Servers from before roles send no access: those tokens may answer.
function meIs(d) {
  S.me = { name: d.name || '', access: d.access || 'approver' };
  ctx.me = S.me.name;
  ctx.access = S.me.access;
  setMe(S.me.name);
  $('me').textContent = S.me.name;
  $('me-role').textContent = d.access || '';
  $('me-role').hidden = !d.access;
  document.body.dataset.access = S.me.access;
  $('viewer-note').hidden = S.me.access !== 'viewer';
}

// recentOf loads scope k's last settled asks, once.
function recentOf(k) {
  if (!S.recents.has(k)) {
    S.recents.set(k, api('GET', `/api/history?limit=${RECENT}${k ? `&${scopeQuery(k)}` : ''}`).then(r => {
      if (r.ok) for (const a of r.data.asks) upsert(a, 'page');
    }));
  }
  return S.recents.get(k);
}

function select(k) {
  if (k === S.selected) return;
  go(S.view, k, { ...S.filters, agent: '', session: '' });
}

function moreSessions() {
  const sess = here().sess;
  if (sess && !sess.done && !sess.loading) sess.more().then(schedule);
}

window.addEventListener('popstate', () => {
  const u = readURL(location.search);
  S.view = u.view;
  S.selected = u.scope;
  S.filters = u.filters;
  apply();
});

// Relative times age in place.
setInterval(() => {
  const now = clock.now();
  for (const t of document.querySelectorAll('time.rel')) t.textContent = relTime(t.getAttribute('datetime'), now);
}, 30000);

// Countdowns count down, and mark their card when its time is nearly up;
// a form's time waiting counts up.
const countdowns = document.getElementsByClassName('countdown'); // live
const waits = document.getElementsByClassName('waited'); // live
function tickAll(force = false) {
  const now = clock.now();
  for (const el of waits) tickWaited(el, now);
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

function setup() {
  setupKeys(() => S.view === '');
  for (const a of document.querySelectorAll('#views .view-link')) {
    a.addEventListener('click', e => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      const v = a.dataset.view;
      if (v !== S.view) go(v, S.selected, v === 'history' ? {} : S.filters);
    });
  }
  $('all-history').addEventListener('click', () => go('history', S.selected, {}));
  for (const b of $('whose').querySelectorAll('button')) b.addEventListener('click', () => setWhose(b.dataset.whose));
  $('empty-all').addEventListener('click', () => setWhose('all'));
  $('pending-more').querySelector('button').addEventListener('click', () => morePending(true));
  new IntersectionObserver(es => { if (es.some(e => e.isIntersecting)) morePending(); }, { rootMargin: '800px 0px' }).observe($('pending-more'));
  setupHistory(filters => go('history', S.selected, filters, true));
}

async function start() {
  setup();
  const me = api('GET', '/api/me').then(r => meIs(r.ok ? r.data : {}));
  // Rules and Settings show what the person may change: they wait for who
  // the person is. The inbox loads meanwhile, and builds its cards after.
  if (S.view === 'rules' || S.view === 'settings') await me;
  const shown = apply();
  await Promise.all([me, shown]);
  S.loaded = true;
  render();
  document.body.classList.add('ready');
  follow(Number(document.querySelector('meta[name="askd-cursor"]').content) || 0, (type, e) => {
    const isNew = !S.asks.has(e.ask.id);
    const src = type === 'ask.created' ? 'created'
      : SETTLING.has(e.action) && e.ask.status !== 'pending' ? 'settled'
        : e.action === 'escalated' ? 'escalated' : '';
    upsert(e.ask, src);
    // Raised when rendered, if it is pending and Mine: a rule answers an
    // approval as it is created, and no one is to hear of that; an ask
    // routed to someone else wakes no one here.
    if (e.ask.status !== 'pending') return;
    if (type === 'ask.created' && isNew) S.toNotify.set(e.ask.id, '');
    if (src === 'escalated') S.toNotify.set(e.ask.id, `escalated to ${e.ask.escalated_to}`);
  });
  setupNotifications();
}

start();
