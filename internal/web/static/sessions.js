// sessions.js renders the session list: All sessions, then every session
// listed so far in the order the server pages them (by agent token, then
// name), each with its pending count, and More sessions while there are
// more pages.
import { h } from './dom.js';

// sessionOrder compares two session keys ("agent\nname") as the server
// orders sessions: by agent, then by name.
export function sessionOrder(x, y) {
  const [xa, xn] = x.split('\n');
  const [ya, yn] = y.split('\n');
  if (xa !== ya) return xa < ya ? -1 : 1;
  return xn < yn ? -1 : xn > yn ? 1 : 0;
}

const links = new Map(); // key → {el, sig}: a link is rebuilt only when it changes
let more = null;
let heading = null;

// renderSessions fills #sessions from S (sessions, selected, sess: the
// pager) with o.count(key) (a number or null), o.select(key) for a click,
// o.hrefFor(key) for the link, and o.more() to load the next page.
export function renderSessions(S, o) {
  const keys = [...S.sessions.keys()].sort(sessionOrder);
  if (S.selected && !S.sessions.has(S.selected)) keys.unshift(S.selected);
  heading = heading || h('div', { class: 'nav-h' }, 'Sessions');
  const els = [heading, link('', 'All sessions', S, o)];
  for (const k of keys) els.push(link(k, k.split('\n')[1], S, o));
  const seen = new Set(['', ...keys]);
  for (const k of links.keys()) if (!seen.has(k)) links.delete(k);
  if (!more) {
    more = h('button', { class: 'link small more-sessions', type: 'button', onclick: () => o.more() }, 'More sessions');
    new IntersectionObserver(es => { if (es.some(e => e.isIntersecting)) o.more(); }).observe(more);
  }
  more.hidden = !S.sess || !S.sess.loaded || S.sess.done;
  more.textContent = S.sess && S.sess.error ? 'More sessions (try again)' : 'More sessions';
  els.push(more);
  const nav = document.getElementById('sessions');
  if (els.length !== nav.children.length || els.some((el, i) => nav.children[i] !== el)) nav.replaceChildren(...els);
}

function link(k, label, S, o) {
  const n = o.count(k) || 0;
  const active = k === S.selected;
  const href = o.hrefFor(k);
  const sig = `${n}|${active}|${href}`;
  const had = links.get(k);
  if (had && had.sig === sig) return had.el;
  const [agent, name] = k ? k.split('\n') : ['', ''];
  const el = h('a', {
    class: 'session-link' + (active ? ' active' : ''),
    href,
    'aria-current': active ? 'page' : null,
    'data-session': name,
    'data-agent': agent,
    title: k ? `Session ${name} of agent ${agent}` : null,
    onclick: e => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      o.select(k);
    },
  }, h('span', { class: 'session-name' }, label),
  // The agent whose session it is, unless the name says it (its default).
  agent && agent !== name ? h('span', { class: 'session-agent' }, agent) : null,
  n ? h('span', { class: 'badge-count' }, String(n)) : null);
  links.set(k, { el, sig });
  return el;
}
