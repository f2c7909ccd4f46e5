// inboxes.js keeps what the page knows of Mine and of All (SPEC §10): for
// each, the pending counts the server gives (per session, '' for all of
// them), moved by events at once and read again from the server soon after;
// the asks those counts hold as pending; and its session list, a page at a
// time. Which of the two is shown is the person's choice, kept in the
// browser. (app.js holds the lists of pending asks and renders.)
import { api, pager } from './api.js';
import { mineOf, mineOfServer } from './mine.js';
import { sessionOrder } from './sessions.js';

const PAGE = 50;                   // sessions a page
const WHOSE = 'askd-inbox-whose';  // where the choice of Mine or All is kept

// inbox is what the page keeps of Mine or of All, as the server pages and
// counts it (with mine=true for Mine).
const inbox = mine => ({
  mine,
  q: mine ? '&mine=true' : '',
  lists: new Map(),     // scope ('' all sessions) → pager of its pending asks, urgent first (app.js)
  counts: new Map(),    // scope → pending asks as the server counts them, kept by events
  live: new Set(),      // ids of the asks those counts hold as pending
  touched: new Set(),   // sessions whose counts events changed since the last refresh
  sess: null,           // pager of the sessions
  sessions: new Map(),  // key → {agent, name}: the sessions listed so far
  // holds reports whether ask a belongs: true, false, or null while the
  // page cannot tell whether it is Mine.
  holds: mine ? mineOf : () => true,
});

// Inboxes is Mine and All. o gives it the page's asks (o.asks: id → the
// newest state), session keys (o.keyOf(a), o.key(agent, name)), a session's
// query (o.scope(k): "&agent=…&session=…", or '' for all), the chosen
// session (o.selected()) and what to call when counts change (o.changed()).
export class Inboxes {
  constructor(o) {
    this.o = o;
    this.mine = inbox(true);
    this.all = inbox(false);
    let stored = null;
    try { stored = localStorage.getItem(WHOSE); } catch { /* none kept */ }
    this.whose = stored === 'all' ? 'all' : 'mine';
    this.refreshTimer = 0;
    this.refreshing = false;
  }

  get shown() { return this[this.whose]; }
  get both() { return [this.mine, this.all]; }

  // choose shows Mine or All from now on, keeps the choice, and reports
  // whether it changed.
  choose(whose) {
    if (whose === this.whose) return false;
    this.whose = whose;
    try { localStorage.setItem(WHOSE, whose); } catch { /* kept for this page only */ }
    this.refreshSoon(); // the counts of the sessions events touched meanwhile
    return true;
  }

  // tally keeps both inboxes' counts as ask a changes (from old, by src:
  // see upsert in app.js).
  tally(a, old, src) {
    for (const box of this.both) this.tallyIn(box, a, old, src);
  }

  // tallyIn keeps box's counts. An ask is counted from when it is known
  // pending: by the server's count it came with, or, when it is new (or
  // newly escalated into Mine), by one more. Whether an ask is Mine may not
  // be known yet: then the server's counts are read again soon, and, while
  // the ask is pending, the server is asked (a settled one is no card, and
  // was never counted as Mine by the page).
  tallyIn(box, a, old, src) {
    const holds = box.holds(a);
    if (holds === null) {
      if (src && src !== 'page') { box.touched.add(this.o.keyOf(a)); this.refreshSoon(); }
      if (a.status !== 'pending') return;
      mineOfServer(a).then(mine => {
        const cur = this.o.asks.get(a.id);
        if (mine && cur.status === 'pending') { box.live.add(cur.id); this.noteSession(box, cur); }
        this.o.changed();
      });
      return;
    }
    if (holds) this.noteSession(box, a);
    if (a.status === 'pending' && holds) {
      if (!box.live.has(a.id) && !(old && old.status !== 'pending')) {
        box.live.add(a.id);
        if ((src === 'created' && !old) || (src === 'escalated' && box.mine)) this.bump(box, a, 1);
      }
    } else if (box.live.delete(a.id) || (!old && src === 'settled' && holds)) {
      this.bump(box, a, -1); // it was pending, counted by the server or by us
    }
  }

  // noteSession lists a's session in box when it belongs in the part of the
  // session list loaded so far (a later page brings the others).
  noteSession(box, a) {
    const k = this.o.keyOf(a);
    const sess = box.sess;
    if (box.sessions.has(k) || !sess || !sess.loaded) return;
    if (sess.done || sessionOrder(k, sess.last) <= 0) box.sessions.set(k, { agent: a.agent, name: a.session });
  }

  // bump changes box's pending counts of a's session and of all sessions by
  // d, at once, and has the server's counts read again soon: those are the
  // truth, these only keep up meanwhile.
  bump(box, a, d) {
    const k = this.o.keyOf(a);
    if (!box.counts.has(k) && box.sessions.has(k) && d > 0) box.counts.set(k, 0); // a new session
    for (const c of ['', k]) if (box.counts.has(c)) box.counts.set(c, box.counts.get(c) + d);
    box.touched.add(k);
    this.refreshSoon();
  }

  // countOf asks the server how many asks of box's scope k are pending.
  async countOf(box, k) {
    const r = await api('GET', `/api/asks?status=pending&limit=1&cursor=${box.q}${this.o.scope(k)}`);
    if (r.ok && r.total != null) box.counts.set(k, r.total);
  }

  refreshSoon() {
    if (!this.refreshTimer) this.refreshTimer = setTimeout(() => this.refreshCounts(), 500);
  }

  // refreshCounts reads again the counts events changed: of all sessions
  // and of the chosen one, of Mine and of All; and of up to 8 other
  // sessions in the inbox shown (the other's wait until it is shown).
  async refreshCounts() {
    this.refreshTimer = 0;
    if (this.refreshing) { this.refreshSoon(); return; }
    this.refreshing = true;
    const reads = [];
    for (const box of this.both) {
      const keys = new Set(['', this.o.selected()]);
      if (box === this.shown) {
        for (const k of [...box.touched].slice(0, 8)) keys.add(k);
        box.touched.clear();
      }
      for (const k of keys) reads.push(this.countOf(box, k));
    }
    await Promise.all(reads);
    this.refreshing = false;
    this.o.changed();
  }

  // counter returns count(box, k): box's pending asks of scope k as the
  // server counts them, less the snoozed ones the page knows of; null when
  // not known yet.
  counter(now) {
    const sleeping = new Map(); // box → scope → snoozed asks
    for (const box of this.both) {
      const m = new Map();
      for (const id of box.live) {
        const a = this.o.asks.get(id);
        if (!(a.snoozed_until && Date.parse(a.snoozed_until) > now)) continue;
        for (const k of ['', this.o.keyOf(a)]) m.set(k, (m.get(k) || 0) + 1);
      }
      sleeping.set(box, m);
    }
    return (box, k) => (box.counts.has(k) ? Math.max(0, box.counts.get(k) - (sleeping.get(box).get(k) || 0)) : null);
  }

  // sessionsOf is the pager of box's sessions (GET /api/sessions, with
  // mine=true for Mine).
  sessionsOf(box) {
    if (!box.sess) {
      box.sess = pager(`/api/sessions${box.mine ? '?mine=true' : ''}`, PAGE, (data, p) => {
        for (const s of data.sessions) {
          const k = this.o.key(s.agent, s.name);
          box.sessions.set(k, { agent: s.agent, name: s.name });
          box.counts.set(k, s.pending);
        }
        if (data.sessions.length) p.last = this.o.key(data.sessions.at(-1).agent, data.sessions.at(-1).name);
        this.o.changed();
      });
    }
    return box.sess;
  }
}
