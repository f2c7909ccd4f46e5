// cards.js builds the card of one pending ask and the words that describe a
// settled one. Agent text only ever enters the page as text (Text nodes,
// textContent, or attribute values that are never URLs or handlers); the
// exceptions are option previews and details, which the server rendered from
// Markdown and sanitized (no links, no images, no scripts).
import { h, add, keyHint, optionText, rel, countdown, inert, MOD } from './dom.js';
import { approvalBody, showQuorum } from './approval.js';
import { formBody, formWhat } from './form.js';
import { errorText } from './api.js';
import { claimRow, showClaim } from './claim.js';
import { readOnlyBody } from './readonly.js';

export const KIND = { question: 'Question', decision: 'Decision', action: 'Action', ready: 'Ready', blocked: 'Blocked', approval: 'Approval', form: 'Form' };
export const kindName = a => (a.kind === 'approval' && a.tool_name ? 'Permission' : KIND[a.kind] || a.kind);

// summary is the ask's one line: its title (a form's message: its first
// line) or first question.
export function summary(a) {
  if (a.kind === 'form' && a.title) return a.title.split('\n').find(l => l.trim()) || a.title;
  return a.title || (a.questions && a.questions[0] && a.questions[0].question) || `Ask #${a.id}`;
}

function choiceText(v) {
  return Array.isArray(v) ? v.join(', ') : String(v);
}

// byRule reports whether a rule answered the ask (it is settled by "rule N").
export const byRule = a => /^rule \d+$/.test(a.settled_by || '');

// outcome describes a settled ask: how it ended, who ended it, and what the
// answer was, in words. An approval a rule answered says so as its history
// does: "allowed by rule 3 (made by alice)".
export function outcome(a) {
  const ans = a.answer || {};
  if (a.status === 'answered' && byRule(a)) {
    const verb = ans.decision === 'rejected' ? 'denied' : 'allowed';
    return { how: 'answered', who: '', what: ans.comment || `${verb} by ${a.settled_by}` };
  }
  if (a.status === 'answered') {
    let what = '';
    if (a.kind === 'question') {
      const qs = a.questions || [];
      if (ans.answers) {
        what = qs.filter(q => q.question in ans.answers)
          .map(q => (qs.length > 1 ? `${q.header}: ` : '') + choiceText(ans.answers[q.question])).join(' · ');
      }
      if (ans.response) what = what ? `${what} · “${ans.response}”` : `“${ans.response}”`;
    } else if (a.kind === 'form') {
      what = formWhat(a);
    } else if (a.kind === 'approval') {
      what = { approved: 'approved', modified: 'approved with edits', rejected: 'rejected' }[ans.decision] || ans.decision || '';
      if (ans.comment) what += `: “${ans.comment}”`;
    } else {
      what = ans.answer || '';
    }
    return { how: 'answered', who: a.settled_by || '', what };
  }
  switch (a.cancel_reason) {
    case 'dismissed': return { how: 'closed', who: a.settled_by || '', what: ans.response ? `“${ans.response}”` : '' };
    case 'timeout': return { how: 'timed out', who: '', what: 'no one answered in time' };
    case 'withdrawn':
      // A relayed permission prompt answered without the inbox says how.
      if ((a.tool_use_id || '').startsWith('channel:') && ans.response) return { how: ans.response, who: '', what: '' };
      // A form is withdrawn when whoever asked stopped waiting (SPEC §9).
      if (a.kind === 'form') return { how: 'withdrawn', who: '', what: 'the agent stopped waiting' };
      return { how: 'withdrawn', who: '', what: 'the agent took it back' };
    case 'replaced': return { how: 'replaced', who: '', what: 'a newer ask took its place' };
  }
  return { how: a.status, who: a.settled_by || '', what: '' };
}

// outcomeLine is outcome as one sentence: "Answered by bob — Postgres".
export function outcomeLine(a) {
  const o = outcome(a);
  let s = o.how[0].toUpperCase() + o.how.slice(1);
  if (o.who) s += ` by ${o.who}`;
  if (o.what) s += ` — ${o.what}`;
  return s;
}

// detailsBox shows an ask's details: as text at once, then as the Markdown
// the server rendered and sanitized, once that arrives (ctx.details). An
// MCP gate's (an approval with a source: the call's arguments, rendered)
// are the MCP server's text: what they hide is shown as escapes (inert).
function detailsBox(st) {
  const text = st.ask.details;
  if (!text) return null;
  const third = st.ask.kind === 'approval' && !!st.ask.source;
  const long = text.length > 1200 || text.split('\n').length > 14;
  const box = h('div', { class: 'details' + (long ? ' clamp' : '') }, h('div', { class: 'details-text' }, third ? inert(text, true) : text));
  st.ctx.details(st.ask.id, st.ask.revision).then(html => {
    if (html == null) return;
    const md = h('div', { class: 'md' });
    // Rendered from Markdown and sanitized on the server (no links, images,
    // scripts or styles), and the page's CSP forbids inline script anyway.
    md.innerHTML = html;
    if (third) inertText(md);
    box.replaceChildren(md);
  });
  if (!long) return box;
  const more = h('button', { class: 'link small show-all', type: 'button', onclick: () => {
    const open = box.classList.toggle('clamp');
    more.textContent = open ? 'Show all' : 'Show less';
  } }, 'Show all');
  return h('div', null, box, more);
}

// inertText shows what the text under el hides as escapes (inert), text
// node by text node.
function inertText(el) {
  const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (w.nextNode()) nodes.push(w.currentNode);
  for (const n of nodes) {
    const parts = inert(n.data, true);
    if (parts.length !== 1 || parts[0] !== n.data) n.replaceWith(...parts);
  }
}

// buildCard returns the card element of a pending ask. ctx gives it the API
// (ctx.api), the way to report a settled or changed ask (ctx.upsert), to keep
// a card on screen after someone else settled its ask (ctx.hold, ctx.release),
// the option previews (ctx.previews), rendered details (ctx.details),
// answerWithRule below (ctx.answerWithRule, which approval.js calls without
// importing this module, which imports it), whether the person may make a
// rule from an ask (ctx.mayRule), and who they are (ctx.me) with their role
// (ctx.access): a viewer's card shows the ask and offers nothing to do.
//
// card._st is the card's state; st.submitFrom(target) is what Ctrl/Cmd+Enter
// does on it, st.escape() what Escape does, and st.refused(res), when a kind
// sets it, shows a refused answer its own way (it returns false to leave it
// to the card's error line).
export function buildCard(ask, ctx) {
  const card = h('article', { class: `card kind-${ask.kind}`, tabindex: '0', 'data-id': ask.id, 'aria-label': `${kindName(ask)}: ${summary(ask)}` });
  const body = h('fieldset', { class: 'card-body' });
  const st = {
    card, ask, ctx, body, dirty: false, settled: false,
    err: h('p', { class: 'card-error', role: 'alert', hidden: true }),
    banner: h('div', { class: 'banner', role: 'status', hidden: true }),
    send: (method, path, payload) => send(st, method, path, payload),
    submit: () => {},
    escape: () => {},
  };
  card._st = st;
  st.detailsEl = detailsBox(st);
  st.stopped = h('p', { class: 'stopped', role: 'note' },
    'The agent stopped waiting for this answer. It still reaches the agent: when it asks again, checks in, or its session goes on.');
  claimRow(st);
  refreshCard(card, ask);
  card.append(meta(ask), st.claimRow, st.stopped);
  if (card.querySelector('.countdown.soon')) card.classList.add('due');
  if (ctx.access === 'viewer') {
    card.classList.add('read-only');
    readOnlyBody(st);
    st.submitFrom = () => {};
  } else {
    if (ask.kind === 'question') questionBody(st);
    else if (ask.kind === 'approval') approvalBody(st);
    else if (ask.kind === 'form') formBody(st);
    else attentionBody(st);
    body.append(footer(st));
    const kindEscape = st.escape;
    st.escape = () => { if (!st.closePane.hidden) st.hideClose(); else kindEscape(); };
    st.submitFrom = t => { if (st.closePane.contains(t)) st.close(); else st.submit(); };
  }
  card.append(body, st.err, st.banner);
  card.addEventListener('input', () => { st.dirty = true; });
  return card;
}

// stoppedWaiting reports whether a blocking ask's agent is no longer waiting
// on it: its call was cut off (or an approval's grace ran out), so the answer
// is told to its session later.
const stoppedWaiting = a => a.status === 'pending' && a.tell && (a.kind === 'question' || a.kind === 'approval');

// refreshCard updates what of a card may change without new content (the
// ask's revision is the same): whether the agent still waits, whom it was
// escalated to, who is on it.
export function refreshCard(card, a) {
  card._st.stopped.hidden = !stoppedWaiting(a);
  showClaim(card._st, a);
  showQuorum(card._st, a);
}

function meta(a) {
  return h('div', { class: 'meta' },
    h('span', { class: `chip kind kind-${a.kind}` }, kindName(a)),
    h('span', { class: 'session', title: 'Session' }, a.session),
    a.agent && a.agent !== a.session ? h('span', { class: 'agent', title: 'Agent' }, a.agent) : null,
    h('span', { class: 'spacer' }),
    a.revision > 1 ? h('span', { class: 'rev', title: 'The agent replaced this ask' }, `rev ${a.revision}`) : null,
    a.deadline ? countdown(a.deadline) : null,
    rel(a.created_at),
  );
}

// send makes one request for the card. A 409 means someone settled the ask
// first: the card stays, saying who did and what.
async function send(st, method, path, payload) {
  if (st.settled || st.inflight) return null;
  st.err.hidden = true;
  st.body.disabled = true;
  st.card.setAttribute('aria-busy', 'true');
  st.inflight = true;
  const res = await st.ctx.api(method, path, payload);
  st.inflight = false;
  st.card.removeAttribute('aria-busy');
  if (res.ok) {
    st.mine = true;
    st.body.disabled = false;
    st.ctx.upsert(res.data);
    return res.data;
  }
  if (res.status === 409 && res.data && res.data.ask && res.data.ask.status === 'pending') {
    // Refused, not settled: this person approved it already (a quorum).
    st.ctx.upsert(res.data.ask);
  } else if (res.status === 409 && res.data && res.data.ask) {
    st.ctx.hold(res.data.ask.id);
    showSettled(st, res.data.ask);
    st.ctx.upsert(res.data.ask);
    return null;
  }
  st.body.disabled = false;
  // A kind may place the refusal itself (a form: beside the fields it names).
  if (st.refused && st.refused(res)) return null;
  st.err.textContent = (res.data && res.data.error) || `Request failed (${res.status || 'network error'})`;
  st.err.hidden = false;
  return null;
}

// showSettled turns the card into a notice that someone else settled it.
export function showSettled(st, a) {
  if (st.settled) return;
  const line = outcomeLine(a);
  notice(st, a.status === 'answered' ? 'Already ' + line[0].toLowerCase() + line.slice(1) : line);
}

// notice ends the card's answering: it shows text, until the person clicks
// OK.
function notice(st, text) {
  st.settled = true;
  st.body.disabled = true;
  st.card.classList.add('settled');
  st.card.classList.remove('due');
  for (const el of st.card.querySelectorAll('.countdown, .form-wait, .claim-row button, button.claim')) el.remove();
  st.banner.replaceChildren(
    h('span', { class: 'banner-text' }, text),
    h('button', { class: 'secondary small', type: 'button', onclick: () => st.ctx.release(st.ask.id) }, 'OK'),
  );
  st.banner.hidden = false;
}

// answerWithRule answers the card's approval with body and then makes the
// rule the person ticked ({match, prefix, effect, for}) from it: two
// requests, since making a rule answers nothing. The card stays until the
// rule is made; when it cannot be, the card says the ask was answered and
// why the rule was not made (the server's words).
export async function answerWithRule(st, path, body, rule) {
  const id = st.ask.id;
  st.ctx.hold(id);
  const done = await st.send('POST', path, body);
  if (!done) {
    if (!st.settled) st.ctx.release(id); // not answered: the card goes on
    return null;
  }
  st.body.disabled = true;
  st.card.setAttribute('aria-busy', 'true');
  const r = await st.ctx.api('POST', '/api/rules', { ask_id: id, ...rule });
  st.card.removeAttribute('aria-busy');
  if (r.ok) {
    st.ctx.release(id);
    return done;
  }
  notice(st, `${body.decision === 'rejected' ? 'Rejected' : 'Approved'}, but the rule was not made: ${errorText(r)}`);
  return done;
}

const answerPath = a => `/api/asks/${a.id}/answer`;

// names lists words for a sentence: "A", "A and B", "A, B and C".
const names = l => (l.length < 2 ? l.join('') : `${l.slice(0, -1).join(', ')} and ${l.at(-1)}`);

// Enter sends from a one-line field; with Ctrl or Cmd it is the page's
// submit key, handled once for the whole card (app.js).
const plainEnter = e => e.key === 'Enter' && !e.ctrlKey && !e.metaKey && !e.isComposing;

function questionBody(st) {
  const a = st.ask;
  const qs = a.questions || [];
  const anyPreview = qs.some(q => q.options.some(o => o.preview));
  // One single-select question without previews: a click is the answer.
  const fast = qs.length === 1 && !qs[0].multiSelect && !anyPreview;
  const sel = qs.map(() => ({ labels: new Set(), other: '' }));
  const submit = h('button', { class: 'primary', type: 'button', disabled: true, onclick: () => doSubmit() }, qs.length > 1 ? 'Submit answers' : 'Submit');
  const missingHint = h('span', { class: 'submit-hint' });
  const keyTip = h('span', { class: 'key-tip', hidden: true }, h('kbd', null, MOD), '+', h('kbd', null, 'Enter'));
  const missing = () => qs.filter((q, i) => !(sel[i].labels.size || sel[i].other.trim())).map(q => q.header);
  // refresh enables Submit once every question has an answer, and says
  // until then which are still to answer.
  const refresh = () => {
    const m = missing();
    submit.disabled = m.length > 0;
    missingHint.textContent = m.length ? `Answer ${names(m)} to submit` : '';
    submit.title = m.length ? missingHint.textContent : `Submit (${MOD}+Enter)`;
    keyTip.hidden = m.length > 0;
  };
  const answers = () => {
    const out = {};
    qs.forEach((q, i) => {
      const s = sel[i];
      const other = s.other.trim();
      if (q.multiSelect) {
        const v = q.options.filter(o => s.labels.has(o.label)).map(o => o.label);
        if (other) v.push(other);
        out[q.question] = v;
      } else {
        out[q.question] = other || [...s.labels][0];
      }
    });
    return out;
  };
  const doSubmit = () => { if (!missing().length) st.send('POST', answerPath(a), { answers: answers() }); };
  const sendOther = input => { if (input.value.trim()) st.send('POST', answerPath(a), { answers: { [qs[0].question]: input.value.trim() } }); };
  const others = [];
  let n = 0;
  qs.forEach((q, qi) => {
    const s = sel[qi];
    const qPreview = q.options.some(o => o.preview);
    const pane = qPreview ? h('div', { class: 'preview', 'aria-live': 'polite' }) : null;
    // The pane shows the preview of the option pointed at or in focus, else
    // of the one chosen last, else a hint: never one nobody picked.
    let chosen = -1;
    const showPreview = oi => { if (pane) renderPreview(st, pane, qi, oi, q.options[oi]); };
    const restPreview = () => {
      if (!pane) return;
      if (chosen >= 0) { showPreview(chosen); return; }
      pane.dataset.shown = '';
      pane.replaceChildren(h('p', { class: 'muted preview-hint' },
        matchMedia('(hover: hover)').matches ? 'Point at an option, or choose one, to see its preview.' : 'Choose an option to see its preview.'));
    };
    const opts = h('div', { class: 'opts' + (q.multiSelect ? ' multi' : '') });
    const other = h('input', { class: 'other', type: 'text', maxlength: '4000', placeholder: 'Other: your own words', 'aria-label': `Other answer: ${q.question}` });
    others.push(other);
    q.options.forEach((o, oi) => {
      n++;
      let el;
      if (q.multiSelect) {
        const box = h('input', { type: 'checkbox', value: o.label, onchange: () => {
          if (box.checked) s.labels.add(o.label); else s.labels.delete(o.label);
          el.classList.toggle('checked', box.checked);
          const last = q.options.findLastIndex(x => s.labels.has(x.label));
          chosen = box.checked ? oi : last;
          refresh();
        } });
        el = h('label', { class: 'opt check', 'data-key': n }, box, keyHint(n), optionText(o));
      } else {
        el = h('button', { class: 'opt', type: 'button', 'aria-pressed': 'false', 'data-key': n, onclick: () => {
          if (fast) { st.send('POST', answerPath(a), { answers: { [q.question]: o.label } }); return; }
          st.dirty = true;
          s.labels = new Set([o.label]);
          s.other = '';
          other.value = '';
          for (const b of opts.children) b.setAttribute('aria-pressed', String(b === el));
          chosen = oi;
          showPreview(oi);
          refresh();
        } }, keyHint(n), optionText(o));
      }
      if (pane) {
        el.addEventListener('mouseenter', () => showPreview(oi));
        el.addEventListener('mouseleave', restPreview);
        el.addEventListener('focusin', () => showPreview(oi));
        el.addEventListener('focusout', restPreview);
      }
      opts.append(el);
    });
    other.addEventListener('input', () => {
      s.other = other.value;
      if (!q.multiSelect && other.value) {
        s.labels.clear();
        for (const b of opts.children) b.setAttribute('aria-pressed', 'false');
        chosen = -1;
        restPreview();
      }
      refresh();
    });
    other.addEventListener('keydown', e => {
      if (!plainEnter(e)) return;
      e.preventDefault();
      if (fast) sendOther(other); else doSubmit();
    });
    const otherRow = h('div', { class: 'other-row' }, other,
      fast ? h('button', { class: 'secondary', type: 'button', onclick: () => sendOther(other) }, 'Send') : null);
    st.body.append(h('section', { class: 'q' },
      h('div', { class: 'q-head' },
        h('span', { class: 'chip header' }, q.header),
        q.multiSelect ? h('span', { class: 'hint' }, 'choose any') : null),
      h('p', { class: 'q-text' }, q.question),
      qPreview ? h('div', { class: 'with-preview' }, opts, pane) : opts,
      otherRow));
    restPreview();
  });
  if (!fast) {
    refresh();
    st.body.append(h('div', { class: 'submit-row' }, missingHint, keyTip, submit));
  }
  st.submit = () => { if (fast) sendOther(others[0]); else doSubmit(); };
}

// keepHeight lets a preview pane grow to its tallest content but never
// shrink: the pointer leaving an option (or focus leaving it for a button
// below) must not pull the page up under the pointer.
function keepHeight(pane) {
  pane.style.minHeight = `${Math.max(pane.offsetHeight, parseFloat(pane.style.minHeight) || 0)}px`;
}

async function renderPreview(st, pane, qi, oi, o) {
  const shown = `${qi}/${oi}`;
  if (pane.dataset.shown === shown) return;
  pane.dataset.shown = shown;
  if (!o || !o.preview) {
    pane.replaceChildren(h('p', { class: 'muted' }, 'No preview for this option.'));
    keepHeight(pane);
    return;
  }
  const p = await st.ctx.previews(st.ask.id);
  if (pane.dataset.shown !== shown) return;
  const label = h('div', { class: 'preview-label' }, 'Preview · ', o.label);
  if (!p) {
    pane.replaceChildren(label, h('pre', { class: 'code' }, o.preview));
  } else if (p.format === 'html') {
    // No allow-scripts, no allow-same-origin: the document cannot run code or
    // reach the inbox; its own response also carries a script-free CSP.
    pane.replaceChildren(label, h('iframe', { class: 'preview-frame', sandbox: '', referrerpolicy: 'no-referrer', loading: 'lazy', title: `Preview of ${o.label}`, src: `/inbox/previews/${st.ask.id}/${qi}/${oi}` }));
  } else {
    const box = h('div', { class: 'md' });
    // Rendered from Markdown and sanitized on the server (no links, images,
    // scripts or styles), and the page's CSP forbids inline script anyway.
    box.innerHTML = (p.previews[qi] && p.previews[qi][oi]) || '';
    pane.replaceChildren(label, box);
  }
  keepHeight(pane);
}

// One-tap answers of the attention kinds that have them.
const QUICK = { ready: ['Done'], action: ['Done', "Can't"] };

function attentionBody(st) {
  const a = st.ask;
  add(st.body, h('h2', { class: 'title' }, a.title), st.detailsEl);
  const answer = v => st.send('POST', answerPath(a), { answer: v });
  const choices = a.kind === 'decision' && a.options && a.options.length ? a.options : null;
  if (choices) {
    const opts = h('div', { class: 'opts' });
    choices.forEach((o, i) => {
      const rec = o.label === a.recommended;
      opts.append(h('button', { class: 'opt' + (rec ? ' recommended' : ''), type: 'button', 'data-key': i + 1, onclick: () => answer(o.label) },
        keyHint(i + 1), optionText(o, rec ? h('span', { class: 'badge' }, 'Recommended') : null)));
    });
    st.body.append(opts);
  }
  const quick = QUICK[a.kind];
  if (quick) {
    st.body.append(h('div', { class: 'row quick' }, quick.map((w, i) =>
      h('button', { class: 'secondary quick-answer', type: 'button', 'data-key': i + 1, title: `Answer “${w}”`, onclick: () => answer(w) }, keyHint(i + 1), w))));
  }
  const input = h('input', { class: 'answer-text', type: 'text', maxlength: '4000', placeholder: choices || quick ? 'Or answer in your own words' : 'Your answer', 'aria-label': `Answer: ${a.title}` });
  const go = () => { const v = input.value.trim(); if (v) answer(v); };
  const btn = h('button', { class: 'primary', type: 'button', disabled: true, onclick: go }, 'Send');
  input.addEventListener('input', () => { btn.disabled = !input.value.trim(); });
  input.addEventListener('keydown', e => { if (plainEnter(e)) { e.preventDefault(); go(); } });
  st.body.append(h('div', { class: 'answer-row' }, input, btn));
  st.submit = go;
}

function tomorrowMorning() {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  d.setHours(9, 0, 0, 0);
  return d.toISOString();
}

// footer holds what every card offers: Take it (claim.js) while nobody is
// on the ask, snoozing, and Close…, which closes the ask without an answer,
// with an optional reply the agent is told.
function footer(st) {
  const a = st.ask;
  const reply = h('input', { class: 'reply', type: 'text', maxlength: '4000', placeholder: 'Reply to the agent (optional)', 'aria-label': 'Reply to the agent on closing' });
  st.close = () => {
    const r = reply.value.trim();
    st.send('DELETE', `/api/asks/${a.id}`, r ? { response: r } : undefined);
  };
  reply.addEventListener('keydown', e => { if (plainEnter(e)) { e.preventDefault(); st.close(); } });
  const toggle = h('button', { class: 'link small close-toggle', type: 'button', 'aria-expanded': 'false', onclick: () => {
    if (st.closePane.hidden) {
      st.closePane.hidden = false;
      toggle.setAttribute('aria-expanded', 'true');
      reply.focus();
    } else {
      st.hideClose();
    }
  } }, 'Close…');
  st.closePane = h('div', { class: 'pane close-pane', hidden: true },
    h('p', { class: 'pane-note' }, a.kind === 'approval'
      ? 'Close without deciding. The agent is told, with your reply if you write one.'
      : 'Close without an answer. The agent is told, with your reply if you write one.'),
    h('div', { class: 'row' }, reply, h('button', { class: 'secondary', type: 'button', onclick: st.close }, 'Close')));
  st.hideClose = () => {
    st.closePane.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    toggle.focus();
  };
  return h('div', { class: 'card-foot' },
    h('div', { class: 'row foot-actions' },
      st.take,
      h('button', { class: 'link small', type: 'button', onclick: () => st.send('POST', `/api/asks/${a.id}/snooze`, { for: '1h' }) }, 'Snooze 1 h'),
      h('button', { class: 'link small', type: 'button', onclick: () => st.send('POST', `/api/asks/${a.id}/snooze`, { until: tomorrowMorning() }) }, 'Until tomorrow'),
      toggle),
    st.closePane);
}
