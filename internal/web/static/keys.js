// keys.js is the inbox's keyboard: j/k move between the pending cards, 1–9
// press what shows that digit on the focused card, Ctrl/Cmd+Enter submits
// it, Escape closes its open pane.

// setupKeys listens for the keys while active() says the inbox is shown.
// Ctrl/Cmd+Enter submits what the focused card has (its answers, its open
// pane's action).
export function setupKeys(active) {
  document.addEventListener('keydown', e => onKey(e, active));
}

function onKey(e, active) {
  if (!active()) return;
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
}
