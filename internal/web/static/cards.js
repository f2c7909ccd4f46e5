// cards.js builds the card of one pending ask and the words that describe a
// settled one. Agent text only ever enters the page as text (Text nodes,
// textContent, or attribute values that are never URLs or handlers); the one
// exception is a Markdown option preview, which the server rendered and
// sanitized (no links, no images, no scripts).

// h creates an element. Props: "class", "text", on<event> listeners, DOM
// properties for booleans (hidden, disabled, checked), and attributes for the
// rest. Children are nodes or strings; strings become Text nodes.
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (typeof v === 'boolean') el[k] = v;
      else el.setAttribute(k, String(v));
    }
  }
  for (const c of kids.flat()) if (c != null && c !== false) el.append(c);
  return el;
}

const KIND = { question: 'Question', decision: 'Decision', action: 'Action', ready: 'Ready', blocked: 'Blocked', approval: 'Approval' };

// micros reads an RFC 3339 time to microseconds, so two states of an ask a
// millisecond apart still order correctly.
export function micros(ts) {
  if (!ts) return 0;
  const m = /^(.*?T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(ts);
  if (!m) return Date.parse(ts) * 1000;
  return Date.parse(m[1] + m[3]) * 1000 + Number(((m[2] || '') + '000000').slice(0, 6));
}

// relTime says how long ago (or, with future times, how soon) ts is.
export function relTime(ts, now = Date.now()) {
  const t = Date.parse(ts);
  const d = Math.round((now - t) / 1000);
  const a = Math.abs(d);
  let s;
  if (a < 45) s = d >= 0 ? 'just now' : 'in a moment';
  else if (a < 3600) s = `${Math.round(a / 60)} min`;
  else if (a < 86400) s = `${Math.round(a / 3600)} h`;
  else s = shortDate.format(new Date(t));
  if (a >= 45 && a < 86400) s = d >= 0 ? `${s} ago` : `in ${s}`;
  return s;
}

const fullTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const shortDate = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

function rel(ts, prefix = '') {
  return h('time', { class: 'rel', datetime: ts, 'data-prefix': prefix, title: fullTime.format(new Date(ts)) }, prefix + relTime(ts));
}

// summary is the ask's one line: its title or first question.
export function summary(a) {
  return a.title || (a.questions && a.questions[0] && a.questions[0].question) || `Ask #${a.id}`;
}

function choiceText(v) {
  return Array.isArray(v) ? v.join(', ') : String(v);
}

// outcome describes a settled ask: how it ended, who ended it, and what the
// answer was, in words.
export function outcome(a) {
  const ans = a.answer || {};
  if (a.status === 'answered') {
    let what = '';
    if (a.kind === 'question') {
      const qs = a.questions || [];
      const keys = ans.answers ? Object.keys(ans.answers) : [];
      if (keys.length) {
        what = qs.filter(q => q.question in ans.answers)
          .map(q => (qs.length > 1 ? `${q.header}: ` : '') + choiceText(ans.answers[q.question])).join(' · ');
      }
      if (ans.response) what = what ? `${what} · “${ans.response}”` : `“${ans.response}”`;
    } else if (a.kind === 'approval') {
      what = { approved: 'approved', modified: 'approved with edits', rejected: 'rejected' }[ans.decision] || ans.decision || '';
      if (ans.comment) what += `: “${ans.comment}”`;
    } else {
      what = ans.answer || '';
    }
    return { how: 'answered', who: a.settled_by, what };
  }
  switch (a.cancel_reason) {
    case 'dismissed': return { how: 'dismissed', who: a.settled_by, what: ans.response ? `“${ans.response}”` : '' };
    case 'timeout': return { how: 'timed out', who: '', what: 'no one answered in time' };
    case 'withdrawn': return { how: 'withdrawn', who: '', what: 'the agent took it back' };
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

function details(text, cls = 'details') {
  if (!text) return null;
  const long = text.length > 1200 || text.split('\n').length > 14;
  const el = h('div', { class: cls + (long ? ' clamp' : '') }, text);
  if (!long) return el;
  const more = h('button', { class: 'link small', type: 'button', onclick: () => {
    const open = el.classList.toggle('clamp');
    more.textContent = open ? 'Show all' : 'Show less';
  } }, 'Show all');
  return h('div', null, el, more);
}

function keyHint(n) {
  return n <= 9 ? h('kbd', { class: 'key', 'aria-hidden': 'true' }, String(n)) : null;
}

function optionText(o, extra) {
  return h('span', { class: 'opt-text' },
    h('span', { class: 'opt-label' }, o.label, extra),
    o.description ? h('span', { class: 'opt-desc' }, o.description) : null);
}

// buildCard returns the card element of a pending ask. ctx gives it the API
// (ctx.api), the way to report a settled or changed ask (ctx.upsert), to keep
// a card on screen after someone else settled its ask (ctx.hold, ctx.release)
// and the option previews (ctx.previews).
export function buildCard(ask, ctx) {
  const card = h('article', { class: `card kind-${ask.kind}`, tabindex: '0', 'data-id': ask.id, 'aria-label': `${KIND[ask.kind] || ask.kind}: ${summary(ask)}` });
  const body = h('fieldset', { class: 'card-body' });
  const st = {
    card, ask, ctx, body, dirty: false, settled: false,
    err: h('p', { class: 'card-error', role: 'alert', hidden: true }),
    banner: h('div', { class: 'banner', role: 'status', hidden: true }),
  };
  card._st = st;
  st.stopped = h('p', { class: 'stopped', role: 'note' },
    'The agent stopped waiting for this answer. It still reaches the agent: when it asks again, checks in, or its session goes on.');
  refreshCard(card, ask);
  card.append(meta(ask), st.stopped);
  if (ask.kind === 'question') questionBody(st);
  else if (ask.kind === 'approval') approvalBody(st);
  else attentionBody(st);
  body.append(footer(st));
  card.append(body, st.err, st.banner);
  card.addEventListener('input', () => { st.dirty = true; });
  return card;
}

// stoppedWaiting reports whether a blocking ask's agent is no longer waiting
// on it: its call was cut off (or an approval's grace ran out), so the answer
// is told to its session later.
const stoppedWaiting = a => a.status === 'pending' && a.tell && (a.kind === 'question' || a.kind === 'approval');

// refreshCard updates what of a card may change without new content (the
// ask's revision is the same): whether the agent still waits.
export function refreshCard(card, a) {
  card._st.stopped.hidden = !stoppedWaiting(a);
}

function meta(a) {
  const m = h('div', { class: 'meta' },
    h('span', { class: `chip kind kind-${a.kind}` }, KIND[a.kind] || a.kind),
    a.tool_name ? h('span', { class: 'chip tool' }, a.tool_name) : null,
    h('span', { class: 'session', title: 'Session' }, a.session),
    a.agent && a.agent !== a.session ? h('span', { class: 'agent', title: 'Agent' }, a.agent) : null,
    h('span', { class: 'spacer' }),
    a.revision > 1 ? h('span', { class: 'rev', title: 'The agent replaced this ask' }, `rev ${a.revision}`) : null,
    a.deadline ? rel(a.deadline, 'times out ') : null,
    rel(a.created_at),
  );
  return m;
}

// send makes one request for the card. A 409 means someone settled the ask
// first: the card stays, saying who did and what.
async function send(st, method, path, payload) {
  if (st.settled) return null;
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
  if (res.status === 409 && res.data && res.data.ask) {
    st.ctx.hold(res.data.ask.id);
    showSettled(st, res.data.ask);
    st.ctx.upsert(res.data.ask);
    return null;
  }
  st.body.disabled = false;
  st.err.textContent = (res.data && res.data.error) || `Request failed (${res.status || 'network error'})`;
  st.err.hidden = false;
  return null;
}

// showSettled turns the card into a notice that someone else settled it.
export function showSettled(st, a) {
  if (st.settled) return;
  st.settled = true;
  st.body.disabled = true;
  st.card.classList.add('settled');
  st.banner.replaceChildren(
    h('span', { class: 'banner-text' }, a.status === 'answered' ? 'Already ' + outcomeLine(a)[0].toLowerCase() + outcomeLine(a).slice(1) : outcomeLine(a)),
    h('button', { class: 'secondary small', type: 'button', onclick: () => st.ctx.release(a.id) }, 'OK'),
  );
  st.banner.hidden = false;
}

const answerPath = a => `/api/asks/${a.id}/answer`;

function questionBody(st) {
  const a = st.ask;
  const qs = a.questions || [];
  const anyPreview = qs.some(q => q.options.some(o => o.preview));
  // One single-select question without previews: a click is the answer.
  const fast = qs.length === 1 && !qs[0].multiSelect && !anyPreview;
  const sel = qs.map(() => ({ labels: new Set(), other: '' }));
  const submit = h('button', { class: 'primary', type: 'button', disabled: true, onclick: () => doSubmit() }, qs.length > 1 ? 'Submit answers' : 'Submit');
  const complete = () => sel.every(s => s.labels.size || s.other.trim());
  const refresh = () => { submit.disabled = !complete(); };
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
  const doSubmit = () => { if (complete()) send(st, 'POST', answerPath(a), { answers: answers() }); };
  let n = 0;
  qs.forEach((q, qi) => {
    const s = sel[qi];
    const qPreview = q.options.some(o => o.preview);
    const pane = qPreview ? h('div', { class: 'preview', 'aria-live': 'polite' }) : null;
    const showPreview = oi => { if (pane) renderPreview(st, pane, qi, oi, q.options[oi]); };
    const opts = h('div', { class: 'opts' + (q.multiSelect ? ' multi' : '') });
    const other = h('input', { class: 'other', type: 'text', maxlength: '4000', placeholder: 'Other: your own words', 'aria-label': `Other answer: ${q.question}` });
    q.options.forEach((o, oi) => {
      n++;
      let el;
      if (q.multiSelect) {
        const box = h('input', { type: 'checkbox', value: o.label, onchange: () => {
          if (box.checked) s.labels.add(o.label); else s.labels.delete(o.label);
          el.classList.toggle('checked', box.checked);
          refresh();
        } });
        el = h('label', { class: 'opt check', 'data-key': n }, box, keyHint(n), optionText(o));
      } else {
        el = h('button', { class: 'opt', type: 'button', 'aria-pressed': 'false', 'data-key': n, onclick: () => {
          if (fast) { send(st, 'POST', answerPath(a), { answers: { [q.question]: o.label } }); return; }
          st.dirty = true;
          s.labels = new Set([o.label]);
          s.other = '';
          other.value = '';
          for (const b of opts.children) b.setAttribute('aria-pressed', String(b === el));
          showPreview(oi);
          refresh();
        } }, keyHint(n), optionText(o));
      }
      if (o.preview) {
        el.addEventListener('mouseenter', () => showPreview(oi));
        el.addEventListener('focus', () => showPreview(oi));
      }
      opts.append(el);
    });
    other.addEventListener('input', () => {
      s.other = other.value;
      if (!q.multiSelect && other.value) {
        s.labels.clear();
        for (const b of opts.children) b.setAttribute('aria-pressed', 'false');
      }
      refresh();
    });
    other.addEventListener('keydown', e => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      if (fast) { if (other.value.trim()) send(st, 'POST', answerPath(a), { answers: { [q.question]: other.value.trim() } }); } else doSubmit();
    });
    const otherRow = h('div', { class: 'other-row' }, other,
      fast ? h('button', { class: 'secondary', type: 'button', onclick: () => { if (other.value.trim()) send(st, 'POST', answerPath(a), { answers: { [q.question]: other.value.trim() } }); } }, 'Send') : null);
    st.body.append(h('section', { class: 'q' },
      h('div', { class: 'q-head' },
        h('span', { class: 'chip header' }, q.header),
        q.multiSelect ? h('span', { class: 'hint' }, 'choose any') : null),
      h('p', { class: 'q-text' }, q.question),
      qPreview ? h('div', { class: 'with-preview' }, opts, pane) : opts,
      otherRow));
    if (qPreview) showPreview(q.options.findIndex(o => o.preview));
  });
  if (!fast) st.body.append(h('div', { class: 'submit-row' }, submit));
}

async function renderPreview(st, pane, qi, oi, o) {
  if (!o || !o.preview) {
    pane.replaceChildren(h('p', { class: 'muted' }, 'No preview for this option.'));
    return;
  }
  if (pane.dataset.shown === `${qi}/${oi}`) return;
  pane.dataset.shown = `${qi}/${oi}`;
  const p = await st.ctx.previews(st.ask.id);
  if (pane.dataset.shown !== `${qi}/${oi}`) return;
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
}

function textAnswer(st, placeholder, label) {
  const input = h('input', { class: 'answer-text', type: 'text', maxlength: '4000', placeholder, 'aria-label': label });
  const go = () => { const v = input.value.trim(); if (v) send(st, 'POST', answerPath(st.ask), { answer: v }); };
  const btn = h('button', { class: 'primary', type: 'button', disabled: true, onclick: go }, 'Send');
  input.addEventListener('input', () => { btn.disabled = !input.value.trim(); });
  input.addEventListener('keydown', e => { if (e.key === 'Enter') { e.preventDefault(); go(); } });
  return [input, btn];
}

function attentionBody(st) {
  const a = st.ask;
  st.body.append(h('h2', { class: 'title' }, a.title), details(a.details));
  if (a.kind === 'decision' && a.options && a.options.length) {
    const opts = h('div', { class: 'opts' });
    a.options.forEach((o, i) => {
      const rec = o.label === a.recommended;
      opts.append(h('button', { class: 'opt' + (rec ? ' recommended' : ''), type: 'button', 'data-key': i + 1,
        onclick: () => send(st, 'POST', answerPath(a), { answer: o.label }) },
      keyHint(i + 1), optionText(o, rec ? h('span', { class: 'badge' }, 'Recommended') : null)));
    });
    st.body.append(opts);
  }
  const [input, btn] = textAnswer(st, a.kind === 'decision' && a.options && a.options.length ? 'Or answer in your own words' : 'Your answer', `Answer: ${a.title}`);
  const close = h('button', { class: 'secondary', type: 'button', title: 'Close without an answer; the agent is told', onclick: () => send(st, 'DELETE', `/api/asks/${a.id}`) }, 'Close');
  st.body.append(h('div', { class: 'answer-row' }, input, btn, close));
}

// parseObject parses an edited payload: it must be a JSON object.
export function parseObject(text) {
  let v;
  try { v = JSON.parse(text); } catch (e) { return { error: `Invalid JSON: ${e.message}` }; }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: 'The payload must be a JSON object ({…}).' };
  return { value: v };
}

function approvalBody(st) {
  const a = st.ask;
  st.body.append(h('h2', { class: 'title' }, a.title), details(a.details, 'details code'));
  const hasPayload = a.payload !== undefined && a.payload !== null;
  const pretty = hasPayload ? JSON.stringify(a.payload, null, 2) : '';
  if (hasPayload) st.body.append(h('div', { class: 'payload-label' }, 'Payload'), h('pre', { class: 'code payload' }, pretty));

  const editor = h('textarea', { class: 'code json-editor', rows: String(Math.min(16, pretty.split('\n').length + 1)), spellcheck: 'false', 'aria-label': 'Edited payload (JSON)' });
  editor.value = pretty;
  const editErr = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const approveEdited = h('button', { class: 'primary', type: 'button', onclick: () => {
    const r = parseObject(editor.value);
    if (r.error) { editErr.textContent = r.error; editErr.hidden = false; approveEdited.disabled = true; editor.focus(); return; }
    send(st, 'POST', answerPath(a), { decision: 'modified', payload: r.value });
  } }, 'Approve with edits');
  editor.addEventListener('input', () => {
    const r = parseObject(editor.value);
    editErr.hidden = !r.error;
    editErr.textContent = r.error || '';
    approveEdited.disabled = !!r.error;
  });
  const editPane = h('div', { class: 'pane edit-pane', hidden: true }, editor, editErr,
    h('div', { class: 'row' }, approveEdited, h('button', { class: 'secondary', type: 'button', onclick: () => { editPane.hidden = true; } }, 'Cancel')));

  const comment = h('textarea', { class: 'comment', rows: '2', maxlength: '4000', placeholder: 'Why? (optional, sent to the agent)', 'aria-label': 'Rejection comment' });
  const rejectPane = h('div', { class: 'pane reject-pane', hidden: true }, comment,
    h('div', { class: 'row' },
      h('button', { class: 'danger', type: 'button', onclick: () => {
        const c = comment.value.trim();
        send(st, 'POST', answerPath(a), c ? { decision: 'rejected', comment: c } : { decision: 'rejected' });
      } }, 'Reject'),
      h('button', { class: 'secondary', type: 'button', onclick: () => { rejectPane.hidden = true; } }, 'Cancel')));

  st.body.append(h('div', { class: 'row decide' },
    h('button', { class: 'primary approve', type: 'button', 'data-key': 1, onclick: () => send(st, 'POST', answerPath(a), { decision: 'approved' }) }, keyHint(1), 'Approve'),
    hasPayload ? h('button', { class: 'secondary edit', type: 'button', 'data-key': 2, onclick: () => { rejectPane.hidden = true; editPane.hidden = false; editor.focus(); } }, keyHint(2), 'Edit…') : null,
    h('button', { class: 'secondary reject', type: 'button', 'data-key': hasPayload ? 3 : 2, onclick: () => { editPane.hidden = true; rejectPane.hidden = false; comment.focus(); } }, keyHint(hasPayload ? 3 : 2), 'Reject…')),
  editPane, rejectPane);
}

function tomorrowMorning() {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  d.setHours(9, 0, 0, 0);
  return d.toISOString();
}

function footer(st) {
  const a = st.ask;
  const reply = h('input', { class: 'reply', type: 'text', maxlength: '4000', placeholder: 'Reply to the agent (optional)', 'aria-label': 'Dismiss with a reply' });
  const dismiss = () => {
    const r = reply.value.trim();
    send(st, 'DELETE', `/api/asks/${a.id}`, r ? { response: r } : undefined);
  };
  reply.addEventListener('keydown', e => { if (e.key === 'Enter') { e.preventDefault(); dismiss(); } });
  const pane = h('div', { class: 'pane dismiss-pane', hidden: true }, h('div', { class: 'row' }, reply,
    h('button', { class: 'secondary', type: 'button', onclick: dismiss }, 'Dismiss')));
  return h('div', { class: 'card-foot' },
    h('div', { class: 'row foot-actions' },
      h('button', { class: 'link small', type: 'button', onclick: () => send(st, 'POST', `/api/asks/${a.id}/snooze`, { for: '1h' }) }, 'Snooze 1 h'),
      h('button', { class: 'link small', type: 'button', onclick: () => send(st, 'POST', `/api/asks/${a.id}/snooze`, { until: tomorrowMorning() }) }, 'Until tomorrow'),
      h('button', { class: 'link small dismiss-toggle', type: 'button', onclick: () => { pane.hidden = !pane.hidden; if (!pane.hidden) reply.focus(); } }, 'Dismiss with reply…')),
    pane);
}
