// mine.js tells which asks are the person's: their Mine (SPEC §10), the
// asks routed to them, to a team of theirs or to nobody, or escalated to
// one of those. The server lists Mine (GET /api/asks?mine=true); the page
// must tell it too for the asks that events bring. It knows the person's
// name (GET /api/me) but not their teams, so a team is learnt to be theirs
// from the Mine pages the server sends, or else by asking the server about
// one ask of it. Whether an ask is Mine depends only on where it is routed
// (its owner and who it was escalated to), so one answer serves every ask
// routed alike. What is learnt holds until the page loads again: a team
// joined meanwhile shows after a reload (the server's counts, read again
// after each change, already follow it).
import { api } from './api.js';

let me = null;
const routes = new Map([['', true]]); // owner or escalation target → whether it is the person's
const pairs = new Map();  // "owner\nescalated_to" → whether such asks are Mine
const asking = new Map(); // "owner\nescalated_to" → Promise of the server's word

const pairOf = a => `${a.owner || ''}\n${a.escalated_to || ''}`;

// setMe names the person.
export function setMe(name) {
  me = name;
  routes.set(name, true);
}

// route says whether asks routed to r are the person's: true, false, or
// undefined for a team not learnt yet. A person is never someone else.
function route(r) {
  if (routes.has(r)) return routes.get(r);
  return r.startsWith('team:') ? undefined : r === me;
}

// mineOf reports whether ask a is Mine: true, false, or null while the page
// cannot tell (mineOfServer finds out).
export function mineOf(a) {
  const known = pairs.get(pairOf(a));
  if (known !== undefined) return known;
  const owner = route(a.owner || '');
  const to = a.escalated_to ? route(a.escalated_to) : false;
  if (owner === true || to === true) return true;
  if (owner === false && to === false) return false;
  return null;
}

// listedMine records that a Mine page held ask a.
export function listedMine(a) { learn(a, true); }

// learn records whether asks routed as a is are Mine, and what that says of
// its routes: a Mine ask never escalated is so by its owner; one whose owner
// is not the person's, by its escalation; an ask not Mine by neither.
function learn(a, mine) {
  pairs.set(pairOf(a), mine);
  const owner = a.owner || '';
  if (!mine) {
    routes.set(owner, false);
    if (a.escalated_to) routes.set(a.escalated_to, false);
  } else if (!a.escalated_to) {
    routes.set(owner, true);
  } else if (route(owner) === false) {
    routes.set(a.escalated_to, true);
  }
}

// mineOfServer asks the server whether ask a is Mine, learns the answer,
// and resolves to it (null when it cannot tell: a failed request, or an
// ask settled before the server could be asked). A Mine list of a's session
// with nothing newer than a holds a first when a is Mine and pending; when
// it does not, a read of a itself tells whether a was pending then (an ask
// never returns to pending).
export function mineOfServer(a) {
  const k = pairOf(a);
  if (pairs.has(k)) return Promise.resolve(pairs.get(k));
  if (!asking.has(k)) {
    const q = new URLSearchParams({ mine: 'true', status: 'pending', agent: a.agent, session: a.session, before: String(a.id + 1), limit: '1' });
    asking.set(k, (async () => {
      const r = await api('GET', `/api/asks?${q}`);
      let mine = null;
      if (r.ok && r.data.asks.some(x => x.id === a.id)) {
        mine = true;
      } else if (r.ok) {
        const now = await api('GET', `/api/asks/${a.id}`);
        if (now.ok && now.data.status === 'pending') mine = false;
      }
      asking.delete(k);
      if (mine !== null) learn(a, mine);
      return mine;
    })());
  }
  return asking.get(k);
}
