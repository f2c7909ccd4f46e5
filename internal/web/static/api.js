// api.js talks to askd's HTTP API: one request (api), and a paged list
// read a page at a time (pager).

// api makes one request and returns {ok, status, data, total, next}: the
// JSON body (null when there is none), and for a page of a list its
// Askd-Total (a number, or null) and Askd-Next-Cursor ("" on the last page).
// A 401 sends the browser to the sign-in page.
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    return { ok: false, status: 0, data: { error: `Cannot reach askd: ${e.message}` }, total: null, next: '' };
  }
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401) location.assign('/signin.html');
  const total = res.headers.get('Askd-Total');
  return { ok: res.ok, status: res.status, data, total: total === null ? null : Number(total), next: res.headers.get('Askd-Next-Cursor') || '' };
}

// details returns a Promise of the HTML of an ask's details, rendered from
// Markdown and sanitized on the server, or of null. Cards ask for them as
// they are built; one request fetches those of many.
export const details = {
  cache: new Map(), // "id@revision" → Promise
  queue: [],
  get(id, revision) {
    const k = `${id}@${revision}`;
    if (!this.cache.has(k)) {
      this.cache.set(k, new Promise(resolve => {
        if (!this.queue.length) setTimeout(() => this.flush(), 0);
        this.queue.push({ id, revision, resolve });
      }));
    }
    return this.cache.get(k);
  },
  async flush() {
    const all = this.queue.splice(0);
    for (let i = 0; i < all.length; i += 50) {
      const batch = all.slice(i, i + 50);
      const r = await api('GET', '/inbox/details?' + batch.map(b => `id=${b.id}`).join('&'));
      const got = new Map(r.ok ? r.data.details.map(d => [d.id, d]) : []);
      for (const b of batch) {
        const d = got.get(b.id);
        b.resolve(d && d.revision === b.revision ? d.html : null);
      }
    }
  },
};

// errorText is what a failed request says, for a person.
export const errorText = r => (r.data && r.data.error) || `Request failed (${r.status || 'network error'})`;

// pager reads the list at path (which may hold a query already) a page of
// limit items at a time. more() loads the next page (the first when none
// is loaded), one request at a time, and calls onPage(data, pager) with each
// page's body; it resolves to whether a page came. pager.done is true once
// the server gave no next cursor; pager.total is the list's Askd-Total;
// pager.error the text of the last failure (more() then tries again).
export function pager(path, limit, onPage) {
  const sep = path.includes('?') ? '&' : '?';
  const p = { next: '', done: false, loaded: false, total: null, error: '', loading: null };
  p.more = () => {
    if (p.done) return Promise.resolve(false);
    if (!p.loading) {
      p.loading = api('GET', `${path}${sep}limit=${limit}&cursor=${encodeURIComponent(p.next)}`).then(r => {
        p.loading = null;
        if (!r.ok) { p.error = errorText(r); return false; }
        p.error = '';
        p.loaded = true;
        p.total = r.total;
        p.next = r.next;
        p.done = !r.next;
        onPage(r.data, p);
        return true;
      });
    }
    return p.loading;
  };
  return p;
}

// nearView reports whether el is on screen or within margin pixels below
// it: where a list's next page should be loading.
export function nearView(el, margin = 800) {
  if (!el || !el.isConnected || el.closest('[hidden]')) return false;
  const r = el.getBoundingClientRect();
  return r.width + r.height > 0 && r.top < innerHeight + margin && r.left < innerWidth + margin;
}
