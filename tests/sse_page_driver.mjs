// Runs the SSE example's page as a browser would, in node: fetches the page from the
// example's server, runs its script against a minimal document, and an EventSource that
// reads the server's stream over loopback (ending early is an "error", as in a browser).
// Prints what the page shows once the page closed its EventSource.
//   node sse_page_driver.mjs http://127.0.0.1:PORT "the prompt"
const [base, prompt] = process.argv.slice(2);
const html = await (await fetch(base + "/")).text();
const script = html.match(/<script>([\s\S]*)<\/script>/)[1];
const elements = { out: { textContent: "" }, f: {}, q: { value: prompt } };
globalThis.document = { getElementById: (id) => elements[id] };
globalThis.q = elements.q; // an element's id is a global in a browser

let closed;
const pageClosed = new Promise((resolve) => { closed = resolve; });

class EventSource {
  constructor(path) {
    this.listeners = {};
    this.onerror = null;
    this.controller = new AbortController();
    this.read(new URL(path, base));
  }
  addEventListener(type, listener) { (this.listeners[type] ??= []).push(listener); }
  close() {
    this.controller.abort();
    closed();
  }
  async read(url) {
    try {
      const response = await fetch(url, { signal: this.controller.signal });
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let type = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) type = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          for (const listener of this.listeners[type] ?? []) {
            if (!this.controller.signal.aborted) listener({ data: data.join("\n") });
          }
        }
      }
    } catch (error) {
      if (this.controller.signal.aborted) return;
    }
    if (this.controller.signal.aborted) return;
    // the stream ended before the page closed it: a browser reports an error, then retries
    if (this.onerror) this.onerror({ type: "error" });
    if (!this.controller.signal.aborted) {
      process.stdout.write("[the page did not close its EventSource: a browser would retry]\n");
      closed();
    }
  }
}
globalThis.EventSource = EventSource;

new Function(script)();
elements.f.onsubmit({ preventDefault() {} });
await pageClosed;
process.stdout.write(elements.out.textContent);
