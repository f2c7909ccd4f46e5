// approval.js builds the body of an approval card: a request_approval's
// title, details and payload, or a permission prompt's headline (what the
// tool will run) and input; Approve, Edit… (a JSON editor showing the edits
// as a diff) and Reject…, each of the two with the choice of a rule for the
// session (rules.js). It also renders edits as a diff for Recent. What a
// tool's card says first, and a gate's arguments, are tool.js's.
import { h, add, keyHint, jsonEscaped } from './dom.js';
import { ruleChoice } from './rules.js';
import { approvalHead, headline, argsView } from './tool.js';

// parseObject parses an edited payload: it must be a JSON object.
export function parseObject(text) {
  let v;
  try { v = JSON.parse(text); } catch (e) { return { error: `Invalid JSON: ${e.message}` }; }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: 'The payload must be a JSON object ({…}).' };
  return { value: v };
}

// pretty is v as indented JSON, with nothing hidden in its strings: a
// bidi control or a zero-width character in an agent's payload shows as
// its \u escape, in the payload, the editor and the diffs alike.
export const pretty = v => jsonEscaped(JSON.stringify(v, null, 2));

// SAID are the input fields a tool's card says elsewhere (title, details),
// which leave its full input folded: a git push's repository, ref, commits
// and kind are the headline and the title.
const SAID = {
  Bash: ['description'],
  'git push': ['repository', 'ref', 'old', 'new', 'kind'],
};

// lineDiff compares two texts line by line and returns [op, line] pairs, op
// ' ' (both), '-' (only in a) or '+' (only in b). The common head and tail
// are matched first; what differs between them by a longest common
// subsequence when it is small enough (it always is for a person's edits),
// else wholly as removed and added.
export function lineDiff(a, b) {
  const A = a.split('\n'), B = b.split('\n');
  let s = 0;
  while (s < A.length && s < B.length && A[s] === B[s]) s++;
  let ea = A.length, eb = B.length;
  while (ea > s && eb > s && A[ea - 1] === B[eb - 1]) { ea--; eb--; }
  const out = A.slice(0, s).map(l => [' ', l]);
  const x = A.slice(s, ea), y = B.slice(s, eb);
  const n = x.length, m = y.length, w = m + 1;
  if (n * m <= 250000) {
    const L = new Uint32Array((n + 1) * w); // L[i*w+j]: LCS of x[i:] and y[j:]
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { out.push([' ', x[i]]); i++; j++; } else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) out.push(['-', x[i++]]);
      else out.push(['+', y[j++]]);
    }
    while (i < n) out.push(['-', x[i++]]);
    while (j < m) out.push(['+', y[j++]]);
  } else {
    for (const l of x) out.push(['-', l]);
    for (const l of y) out.push(['+', l]);
  }
  for (const l of A.slice(ea)) out.push([' ', l]);
  return out;
}

const CONTEXT = 2; // unchanged lines shown around a change

// diffView shows how text b differs from a: removed lines struck in red,
// added ones in green, long unchanged stretches folded. null when they are
// the same.
export function diffView(a, b) {
  const d = lineDiff(a, b);
  if (d.every(([op]) => op === ' ')) return null;
  const box = h('pre', { class: 'code diff', 'aria-label': 'Edits: removed and added lines' });
  const near = d.map(() => false);
  d.forEach(([op], i) => {
    if (op === ' ') return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(d.length - 1, i + CONTEXT); k++) near[k] = true;
  });
  for (let i = 0; i < d.length;) {
    const [op, line] = d[i];
    if (op === ' ' && !near[i]) {
      let j = i;
      while (j < d.length && d[j][0] === ' ' && !near[j]) j++;
      box.append(h('span', { class: 'fold' }, `⋯ ${j - i} unchanged line${j - i > 1 ? 's' : ''}`));
      i = j;
      continue;
    }
    box.append(op === '+' ? h('ins', null, '+ ' + line) : op === '-' ? h('del', null, '- ' + line) : h('span', { class: 'same' }, '  ' + line));
    i++;
  }
  return box;
}

// approvalBody fills the card body of approval st.ask. st gives it the card's
// send and its details element; it sets st.submit (Ctrl/Cmd+Enter).
export function approvalBody(st) {
  const a = st.ask;
  const path = `/api/asks/${a.id}/answer`;
  // An approver makes rules only from asks routed to them, a team of
  // theirs or nobody (ctx.mayRule).
  const rules = st.ctx.mayRule(a);
  const allowRule = rules ? ruleChoice(a, 'allow') : null;
  const denyRule = rules ? ruleChoice(a, 'deny') : null;
  // decide answers the ask and then, when one is ticked, makes the rule.
  const decide = (body, choice) => {
    const rule = choice && choice.value();
    return rule ? st.ctx.answerWithRule(st, path, body, rule) : st.send('POST', path, body);
  };
  // Under a quorum (SPEC §11) an edit is what the others approve.
  const shown = approving(a);
  const hasPayload = shown != null && typeof shown === 'object';
  // A prompt relayed from a Claude Code channel (tool_use_id "channel:…") is
  // open in the terminal too, and takes only allow or deny: no edit.
  const relayed = (a.tool_use_id || '').startsWith('channel:');
  // An approval whose agent cannot run an edited call (no_edit: Copilot's,
  // Qwen's and Gemini's hooks, SPEC §18) offers no Edit either.
  const noEdit = relayed || a.no_edit === true;
  const original = hasPayload ? pretty(shown) : '';
  add(st.body, approvalHead(a),
    relayed ? h('p', { class: 'subtitle relayed' }, 'Also open in the Claude Code terminal: the first answer wins.') : null,
    a.no_edit === true ? h('p', { class: 'subtitle no-edit' }, 'This agent cannot run an edited call: approve or reject it as it is.') : null,
    st.detailsEl);
  const view = hasPayload ? payloadView(a, original) : null;
  add(st.body, view);

  // Edit…: the payload becomes the editor (not shown twice), the diff of the
  // edits shows below it, and only Approve with edits and Cancel edit are
  // offered until the edit is cancelled.
  const editor = h('textarea', { class: 'code json-editor', rows: String(Math.min(16, original.split('\n').length + 1)), spellcheck: 'false', 'aria-label': 'Edited payload (JSON)' });
  const editErr = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const diffBox = h('div', { class: 'diff-box', 'aria-live': 'polite' });
  const approveEdited = h('button', { class: 'primary', type: 'button', disabled: true, onclick: () => {
    const r = check();
    if (r) st.send('POST', path, { decision: 'modified', payload: r.value });
  } }, 'Approve with edits');
  const editHint = h('span', { class: 'submit-hint' });
  // check reads the editor and updates what it says; it returns the edited
  // object when there is one to approve.
  const check = () => {
    const r = parseObject(editor.value);
    editErr.hidden = !r.error;
    editErr.textContent = r.error || '';
    let diff = null;
    if (!r.error) diff = diffView(original, pretty(r.value));
    diffBox.replaceChildren(r.error ? '' : diff || h('p', { class: 'muted' }, 'No edits yet: the payload is as the agent sent it.'));
    const ok = !r.error && diff !== null;
    approveEdited.disabled = !ok;
    editHint.textContent = r.error ? 'Fix the JSON to approve' : diff ? '' : 'Edit the payload to approve with edits';
    return ok ? r : null;
  };
  editor.addEventListener('input', check);
  const decideRow = h('div', { class: 'row decide' });
  const editPane = h('div', { class: 'pane edit-pane', hidden: true }, editor, editErr, diffBox,
    h('div', { class: 'row edit-actions' }, approveEdited,
      h('button', { class: 'secondary', type: 'button', onclick: () => showEdit(false) }, 'Cancel edit'), editHint));
  const editBtn = hasPayload && !noEdit ? h('button', { class: 'secondary edit', type: 'button', 'data-key': 2, onclick: () => showEdit(true) }, keyHint(2), 'Edit…') : null;
  const showEdit = on => {
    editPane.hidden = !on;
    decideRow.hidden = on;
    if (allowRule) allowRule.el.hidden = on;
    if (view) view.hidden = on;
    if (on) {
      rejectPane.hidden = true;
      reject.setAttribute('aria-expanded', 'false');
      editor.value = original;
      check();
      editor.focus();
    } else {
      editBtn.focus();
    }
  };

  const comment = h('textarea', { class: 'comment', rows: '2', maxlength: '4000', placeholder: 'Why? (optional, sent to the agent)', 'aria-label': 'Rejection comment' });
  const doReject = () => {
    const c = comment.value.trim();
    decide(c ? { decision: 'rejected', comment: c } : { decision: 'rejected' }, denyRule);
  };
  const rejectPane = h('div', { class: 'pane reject-pane', hidden: true }, comment, denyRule && denyRule.el,
    h('div', { class: 'row' }, h('button', { class: 'danger', type: 'button', onclick: doReject }, 'Reject')));
  const rejectKey = editBtn ? 3 : 2;
  // Reject… shows its pane, with the deny rules in the allow rules' place.
  const showReject = on => {
    rejectPane.hidden = !on;
    reject.setAttribute('aria-expanded', String(on));
    if (allowRule) allowRule.el.hidden = on;
  };
  const reject = h('button', { class: 'secondary reject', type: 'button', 'aria-expanded': 'false', 'data-key': rejectKey, onclick: () => {
    showReject(rejectPane.hidden);
    if (!rejectPane.hidden) comment.focus();
  } }, keyHint(rejectKey), 'Reject…');
  const approve = h('button', { class: 'primary approve', type: 'button', 'data-key': 1, onclick: () => decide({ decision: 'approved' }, allowRule) }, keyHint(1), 'Approve');
  add(decideRow, approve, editBtn, reject);
  st.quorumLine = h('p', { class: 'quorum', role: 'status', hidden: true });
  st.approveButtons = [approve, editBtn].filter(Boolean);
  add(st.body, st.quorumLine, decideRow, allowRule && allowRule.el, editPane, rejectPane);
  showQuorum(st, a);

  st.submit = () => {
    if (!editPane.hidden) approveEdited.click();
    else if (!rejectPane.hidden) doReject();
  };
  st.escape = () => {
    if (!rejectPane.hidden) { showReject(false); reject.focus(); }
  };
}

// payloadView shows the payload: a request_approval's under its label; a
// permission prompt's whole input folded away when the headline already says
// all of it; the arguments of a call through a gate (an approval with a
// source) one by one (argsView).
export function payloadView(a, text) {
  const pre = h('pre', { class: 'code payload' }, text);
  const shown = approving(a);
  if (a.source && shown !== null && typeof shown === 'object' && !Array.isArray(shown)) return argsView(shown, pre);
  if (!a.tool_name) return h('div', { class: 'payload-box' }, h('div', { class: 'payload-label' }, 'Payload'), pre);
  const hl = headline(a.tool_name, a.payload);
  const said = SAID[a.tool_name] || [];
  const more = Object.keys(a.payload).filter(f => !(hl && f === hl.field) && !said.includes(f));
  return h('details', { class: 'input-box', open: more.length > 0 }, h('summary', null, 'Full input'), pre);
}

// showQuorum shows how far an approval a policy covers has come (SPEC §11),
// "1 of 2 approvals, by alice", from a, the ask's newest state; a person
// who approved already, or the agent's owner where the policy excludes
// them, is offered no Approve (the server would refuse it: 409, 403), only
// Reject.
export function showQuorum(st, a) {
  if (!st.quorumLine) return;
  const need = a.approvals_needed || 0;
  st.quorumLine.hidden = need === 0;
  if (need === 0) return;
  const by = (a.approvals || []).map(ap => ap.by + (ap.payload ? ' (edited)' : ''));
  const me = st.ctx.me;
  const mine = (a.approvals || []).some(ap => ap.by === me);
  const owner = a.exclude_owner && a.owner === me;
  let text = `${by.length} of ${need} approvals` + (by.length ? `, by ${by.join(', ')}` : '');
  if (mine) text += ': you approved; it waits for someone else';
  else if (owner) text += ': your agent asked, so others approve it';
  st.quorumLine.textContent = text;
  for (const b of st.approveButtons) b.disabled = mine || owner;
}

// approving is the payload people approve: an edit that started a
// quorum's count again (the first approval's), else the agent's.
export const approving = a => (a.approvals && a.approvals.length && a.approvals[0].payload) || a.payload;
