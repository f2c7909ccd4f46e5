// claim.js is a card's line of whom its ask is for and who is on it (SPEC
// §10): "for team:platform · escalated to carol · bob is on it", with Let go
// (DELETE /api/asks/{id}/claim) for the claimer and admins; and, among the
// card's other actions below, Take it (POST) for approvers and admins while
// nobody is on it. A claim tells everyone who is looking; it stops no one
// from answering (the first answer wins).
import { h, stamp } from './dom.js';
import { errorText } from './api.js';

// claimRow makes the line's element (st.claimRow) and Take it (st.take,
// for the card's footer), which showClaim fills and shows.
export function claimRow(st) {
  st.claimRow = h('div', { class: 'claim-row', hidden: true });
  st.take = h('button', { class: 'link small claim', type: 'button', hidden: true, title: 'Say you are on it: everyone sees it', onclick: () => claim(st, st.take, 'POST') }, 'Take it');
  st.lostTo = ''; // who took the ask first when this person's Take it lost
  return st.claimRow;
}

// showClaim fills the card's line from a, the ask's newest state. The
// person (st.ctx.me) and their role (st.ctx.access) say what they may do.
export function showClaim(st, a) {
  const { me, access } = st.ctx;
  const taker = access === 'admin' || access === 'approver';
  let action = '';
  if (taker && !st.settled) {
    if (!a.claimed_by) action = 'take';
    else if (a.claimed_by === me || access === 'admin') action = 'release';
  }
  const lost = st.lostTo && st.lostTo === a.claimed_by;
  const sig = [a.owner, a.escalated_to, a.claimed_by, action, lost].join('\n');
  if (st.claimSig === sig) return;
  st.claimSig = sig;
  const says = [];
  if (a.owner) says.push(h('span', { class: 'owner', title: 'Routed to' }, `for ${a.owner}`));
  if (a.escalated_to) {
    says.push(h('span', { class: 'escalated', title: a.escalated_at ? `Escalated ${stamp(a.escalated_at)}` : null }, `escalated to ${a.escalated_to}`));
  }
  if (a.claimed_by) {
    says.push(h('span', { class: 'claimed' + (a.claimed_by === me ? ' by-me' : ''), title: a.claimed_at ? `Since ${stamp(a.claimed_at)}` : null },
      a.claimed_by === me ? 'You’re on it' : `${a.claimed_by} is on it`));
  }
  if (lost) says.push(h('span', { class: 'claim-lost', role: 'status' }, `${a.claimed_by} took it first`));
  let letGo = null;
  if (action === 'release') {
    letGo = h('button', { class: 'link small release', type: 'button', onclick: () => claim(st, letGo, 'DELETE') }, 'Let go');
  }
  st.take.hidden = action !== 'take';
  st.claimRow.replaceChildren(h('span', { class: 'claim-says' }, says), letGo || '');
  st.claimRow.hidden = says.length === 0 && !letGo;
}

// claim takes the ask (POST) or lets it go (DELETE), from button. When
// someone else took it first (409 with the ask still pending), the line
// says who.
async function claim(st, button, method) {
  if (button.disabled) return;
  button.disabled = true;
  st.err.hidden = true;
  const res = await st.ctx.api(method, `/api/asks/${st.ask.id}/claim`, method === 'POST' ? {} : undefined);
  button.disabled = false;
  const cur = res.ok ? res.data : res.status === 409 && res.data && res.data.ask;
  if (cur) {
    st.lostTo = res.ok ? '' : cur.claimed_by || '';
    // A settled ask goes as any does (the page says who settled it).
    st.ctx.upsert(cur);
    if (cur.status === 'pending') showClaim(st, cur);
    return;
  }
  st.err.textContent = errorText(res);
  st.err.hidden = false;
}
