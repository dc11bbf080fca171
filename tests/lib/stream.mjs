// stream.mjs -- a live badges stream (/badges/live) read as a raw
// EventSource: its events as they come, parsed (docs/INTERFACE.md).

// An open stream of client c on the stack: { status, type, events,
// ended, next(pred, from, ms), close() }.
export async function openStream(stack, c) {
  const ctl = new AbortController();
  const t0 = Date.now();
  const res = await fetch(`${stack.base}/badges/live`, {
    headers: { cookie: c.cookieHeader(), accept: 'text/event-stream' }, signal: ctl.signal,
  });
  const s = { status: res.status, type: res.headers.get('content-type'), events: [], ended: false, waiters: [] };
  if (res.status !== 200) {
    await res.text();
    return s;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          const event = (block.split('\n').find((l) => l.startsWith('event:')) ?? 'event: message').slice(6).trim();
          if (data === '' ) continue;	// a comment or a ping
          s.events.push({ at: Date.now() - t0, event, data: JSON.parse(data) });
          for (const w of s.waiters.splice(0)) w();
        }
      }
    } catch { /* aborted */ }
    s.ended = true;
    for (const w of s.waiters.splice(0)) w();
  })();
  s.close = () => ctl.abort();
  // The first event that satisfies pred, from index `from` on, within ms.
  s.next = async (pred, from = 0, ms = 1000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const e = s.events.slice(from).find((x) => pred(x.data));
      if (e) return e;
      const left = deadline - Date.now();
      if (left <= 0 || s.ended) return null;
      await new Promise((r) => { s.waiters.push(r); setTimeout(r, left); });
    }
  };
  return s;
}
