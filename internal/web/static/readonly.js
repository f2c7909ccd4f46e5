// readonly.js builds the body of a card for a viewer (SPEC §10: a viewer
// reads the inbox, and answers, dismisses, snoozes, claims and makes rules
// nothing): what the ask says and offers, with nothing to press or type.
// Options are listed as text, an approval's payload shown as it came, a
// form's fields named; agent text enters the page only as text, as on
// every card.
import { h, add, optionText } from './dom.js';
import { payloadView, pretty, approving, showQuorum } from './approval.js';
import { approvalHead } from './tool.js';
import { message, from, addressBox } from './form.js';
import { fieldsOf, label } from './formcheck.js';

// readOnlyBody fills st.body for ask st.ask.
export function readOnlyBody(st) {
  const a = st.ask;
  if (a.kind === 'question') questions(st);
  else if (a.kind === 'approval') approval(st);
  else if (a.kind === 'form') form(st);
  else attention(st);
}

// choices lists options as text; the recommended one says so.
const choices = (options, recommended) => h('ul', { class: 'ro-choices' },
  options.map(o => h('li', { class: 'ro-choice' + (o.label === recommended ? ' recommended' : '') },
    optionText(o, o.label === recommended ? h('span', { class: 'badge' }, 'Recommended') : null))));

function questions(st) {
  for (const q of st.ask.questions || []) {
    st.body.append(h('section', { class: 'q' },
      h('div', { class: 'q-head' },
        h('span', { class: 'chip header' }, q.header),
        q.multiSelect ? h('span', { class: 'hint' }, 'any of') : null),
      h('p', { class: 'q-text' }, q.question),
      choices(q.options)));
  }
}

function attention(st) {
  const a = st.ask;
  add(st.body, h('h2', { class: 'title' }, a.title), st.detailsEl,
    a.kind === 'decision' && a.options && a.options.length ? choices(a.options, a.recommended) : null);
}

function approval(st) {
  const a = st.ask;
  const shown = approving(a); // under a quorum, an edit is what is approved
  const hasPayload = shown != null && typeof shown === 'object';
  st.quorumLine = h('p', { class: 'quorum', role: 'status', hidden: true });
  st.approveButtons = [];
  add(st.body, approvalHead(a), st.detailsEl,
    st.quorumLine, hasPayload ? payloadView(a, pretty(shown)) : null);
  showQuorum(st, a);
}

function form(st) {
  const a = st.ask;
  st.body.append(message(a), from(a));
  if (a.url) {
    st.body.append(addressBox(a));
    return;
  }
  st.body.append(h('ul', { class: 'ro-fields' }, fieldsOf(a.schema).map(f => h('li', null,
    h('span', { class: 'ro-field' }, label(f)), f.required ? h('span', { class: 'muted' }, ' (required)') : null,
    f.description ? h('span', { class: 'field-desc' }, f.description) : null))));
}
